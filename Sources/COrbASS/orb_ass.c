#include "orb_ass.h"

#include <stdarg.h>
#include <stdio.h>

static void say(int level, const char *format, va_list args, void *data) {
  int most = (int)(intptr_t)data;
  if (level > most) return;
  char line[512];
  vsnprintf(line, sizeof line, format, args);
  fprintf(stderr, "libass: %s\n", line);
}

void orb_ass_set_messages(ASS_Library *library, int most) {
  ass_set_message_cb(library, say, (void *)(intptr_t)most);
}

orb_ass_box orb_ass_bounds(const ASS_Image *images) {
  orb_ass_box box = {0, 0, 0, 0};
  int any = 0;
  for (const ASS_Image *i = images; i; i = i->next) {
    if (i->w <= 0 || i->h <= 0) continue;
    int x1 = i->dst_x + i->w, y1 = i->dst_y + i->h;
    if (!any) {
      box = (orb_ass_box){i->dst_x, i->dst_y, x1, y1};
      any = 1;
      continue;
    }
    if (i->dst_x < box.x0) box.x0 = i->dst_x;
    if (i->dst_y < box.y0) box.y0 = i->dst_y;
    if (x1 > box.x1) box.x1 = x1;
    if (y1 > box.y1) box.y1 = y1;
  }
  return box;
}

void orb_ass_compose(const ASS_Image *images, uint8_t *canvas, int x0, int y0, int width, int height) {
  for (const ASS_Image *i = images; i; i = i->next) {
    uint32_t r = i->color >> 24, g = (i->color >> 16) & 0xFF, b = (i->color >> 8) & 0xFF;
    uint32_t opacity = 255 - (i->color & 0xFF);
    if (opacity == 0) continue;
    for (int row = 0; row < i->h; row++) {
      int y = i->dst_y + row - y0;
      if (y < 0 || y >= height) continue;
      const uint8_t *mask = i->bitmap + (size_t)row * i->stride;
      uint8_t *out = canvas + (size_t)y * width * 4;
      for (int column = 0; column < i->w; column++) {
        int x = i->dst_x + column - x0;
        if (x < 0 || x >= width || mask[column] == 0) continue;
        // k: this pixel's coverage times the colour's opacity, 0-255; premultiplied "over".
        uint32_t k = (mask[column] * opacity + 127) / 255, rest = 255 - k;
        uint8_t *p = out + x * 4;
        p[0] = (uint8_t)((b * k + p[0] * rest + 127) / 255);
        p[1] = (uint8_t)((g * k + p[1] * rest + 127) / 255);
        p[2] = (uint8_t)((r * k + p[2] * rest + 127) / 255);
        p[3] = (uint8_t)((255 * k + p[3] * rest + 127) / 255);
      }
    }
  }
}
