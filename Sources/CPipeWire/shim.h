// PipeWire for Swift. The audio output (issue: audio) builds its stream on these headers;
// `static inline` helpers go here for the macros and variadics Swift cannot import.
#ifndef ORB_CPIPEWIRE_SHIM_H
#define ORB_CPIPEWIRE_SHIM_H
#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>

/// The version of the PipeWire library this process loaded.
static inline const char *orb_pw_library_version(void) { return pw_get_library_version(); }
#endif
