#ifndef ORB_SIGNALS_H
#define ORB_SIGNALS_H

/// Sends each of `count` signals in `signals` to a handler that writes the signal's number (one byte) to `fd`, and
/// nothing else: async-signal-safe, unlike a handler written in Swift (whose globals and exclusivity checks may
/// reach the runtime). `fd` should be non-blocking (a full pipe drops the byte). Returns 0, or -1 if a handler could
/// not be installed. Call once, before the signals may come.
int orb_signals_to_pipe(int fd, const int *signals, int count);

#endif
