#ifndef ORB_STARTUP_H
#define ORB_STARTUP_H

/// What the process does differently from its libraries' defaults before `main` runs (see orb_startup.c). Nothing
/// here is called: the definitions work by being in the executable, which the dynamic loader searches first.

#endif
