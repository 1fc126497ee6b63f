// libass, and the per-pixel work on what it draws, in C.
#ifndef ORB_ASS_H
#define ORB_ASS_H

#include <ass/ass.h>
#include <stdint.h>

// Sends libass's own messages of level `most` or lower (0 fatal, 1 error, 2 warning ...) to standard error,
// prefixed "libass: ", and drops the rest (by default it prints its informational chatter too).
void orb_ass_set_messages(ASS_Library *library, int most);

// The smallest box holding every picture of `images` (a list ass_render_frame returned), x0/y0 inclusive, x1/y1
// exclusive; an empty box (x0 == x1) when there is none.
typedef struct {
  int x0, y0, x1, y1;
} orb_ass_box;
orb_ass_box orb_ass_bounds(const ASS_Image *images);

// Blends every picture of `images`, in order, over `canvas`: premultiplied BGRA (cairo's and so GTK's own order on a
// little-endian machine: GTK copies it as it is, where RGBA went through its per-pixel conversion, 28 % of the CPU
// of a playback with a moving sign), `width` by `height` pixels, no padding, whose top-left pixel is (x0, y0) of the
// frame. Each picture is a coverage mask painted in its colour
// (0xRRGGBBAA, AA the transparency); the parts outside the canvas are left out.
void orb_ass_compose(const ASS_Image *images, uint8_t *canvas, int x0, int y0, int width, int height);

#endif
