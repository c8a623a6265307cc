# Helpers shared by the report programs (POSIX awk: Debian's mawk has no asort).

# Sorts a[1..n] numerically in place (insertion sort: n is small).
function sortn(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j > 0 && a[j] > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
}

# Median of a[1..n]; sorts a.
function median(a, n) {
    sortn(a, n)
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# Nearest-rank percentile p (0-100) of a[1..n]; sorts a.
function pct(a, n, p,    k) {
    sortn(a, n)
    k = int(p / 100 * n + 0.999999)
    if (k < 1) k = 1
    if (k > n) k = n
    return a[k]
}

# Numbers with a thousands separator.
function commas(x,    s, neg, out) {
    neg = x < 0; if (neg) x = -x
    s = sprintf("%.0f", x); out = ""
    while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
    return (neg ? "-" : "") s out
}

function yesno(ok) { return ok ? "**met**" : "**NOT met**" }
