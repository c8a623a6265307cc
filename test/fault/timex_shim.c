/*
 * The kernel's view of time synchronisation, replaced for the fault suite
 * (test/fault/run.sh, case 15): ntp_adjtime() and adjtimex() answer what the
 * file named by SF_TIMEX_FILE says, read at every call:
 *
 *   STATE STATUS MAXERROR_US ESTERROR_US     e.g. "0 0 3000 1000" (synchronised)
 *                                                 "5 64 16000000 16000000" (not)
 *
 * Without the file, the real call answers. Only reads are replaced (modes 0).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>

static int answer(struct timex *tx, int *state)
{
    const char *file = getenv("SF_TIMEX_FILE");
    FILE *f;
    long st, status, maxerror, esterror;
    int n;

    if (tx == NULL || tx->modes != 0 || file == NULL || (f = fopen(file, "r")) == NULL)
        return 0;
    n = fscanf(f, "%ld %ld %ld %ld", &st, &status, &maxerror, &esterror);
    fclose(f);
    if (n != 4)
        return 0;
    memset(tx, 0, sizeof(*tx));
    tx->status = (int) status;
    tx->maxerror = maxerror;
    tx->esterror = esterror;
    *state = (int) st;
    return 1;
}

int ntp_adjtime(struct timex *tx)
{
    static int (*real)(struct timex *);
    int state;

    if (answer(tx, &state))
        return state;
    if (real == NULL)
        real = (int (*)(struct timex *)) dlsym(RTLD_NEXT, "ntp_adjtime");
    return real(tx);
}

int adjtimex(struct timex *tx)
{
    static int (*real)(struct timex *);
    int state;

    if (answer(tx, &state))
        return state;
    if (real == NULL)
        real = (int (*)(struct timex *)) dlsym(RTLD_NEXT, "adjtimex");
    return real(tx);
}
