# free_tcp_port: prints a loopback TCP port that no socket uses now, below
# the kernel's range of ephemeral ports, so that no outgoing connection (a
# client of some other test) takes it meanwhile; a port of that range can be
# in use as the local end of a connection, and the server's bind then fails.
# Another server may still take the port first: callers check that theirs
# started, and try again with another port. Source this file (test/lib/pg.sh
# and test/lib/etcd.sh do).
free_tcp_port() {
    local lo=20000 hi _ used p
    read -r hi _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || hi=32768
    [ "$hi" -gt $((lo + 2000)) ] 2>/dev/null || lo=10000
    [ "$hi" -gt $((lo + 2000)) ] 2>/dev/null || hi=$((lo + 10000))
    used=" $(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); printf "%s ", a[n] }') "
    while :; do
        p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo)))
        [[ $used == *" $p "* ]] || { echo "$p"; return; }
    done
}
