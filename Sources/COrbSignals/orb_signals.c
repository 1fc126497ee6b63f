#include "orb_signals.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t signal_pipe = -1;

static void write_number(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    if (signal_pipe >= 0) (void)!write(signal_pipe, &byte, 1);
    errno = saved;
}

int orb_signals_to_pipe(int fd, const int *signals, int count) {
    signal_pipe = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = write_number;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (int i = 0; i < count; i++) {
        if (sigaction(signals[i], &action, NULL) != 0) return -1;
    }
    return 0;
}
