// GTK 4 and GL (through libepoxy) for Swift. Each helper exists because Swift cannot import the thing it wraps.
#ifndef ORB_CGTK_SHIM_H
#define ORB_CGTK_SHIM_H
#include <malloc.h>
#include <gtk/gtk.h>
#include <glib-unix.h>
#include <epoxy/gl.h>
#ifdef GDK_WINDOWING_X11
#include <gdk/x11/gdkx.h>
#include <cairo-xlib.h>
#endif
#include <string.h>
#include <unistd.h>

// g_signal_connect is a macro over g_signal_connect_data.
static inline gulong orb_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data,
                                        GClosureNotify destroy) {
  return g_signal_connect_data(instance, signal, handler, data, destroy, 0);
}

#ifdef GDK_WINDOWING_X11
// `window`'s X11 surface, or NULL where it has none (Wayland, not realized).
static inline GdkSurface *orb_x11_surface(GtkWidget *window) {
  GtkNative *native = gtk_widget_get_native(window);
  GdkSurface *surface = native ? gtk_native_get_surface(native) : NULL;
  return surface && GDK_IS_X11_SURFACE(surface) ? surface : NULL;
}
#endif

/// Makes `lost` Xlib's handler of a broken connection to the X server (the server went away, or a client killed
/// ours: xkill), in place of GDK's, which exits at once saying nothing the host hears. `lost` runs on the thread whose
/// X call failed (GDK's: the main thread) and must exit the process, not return. Returns FALSE where the display is
/// not X11 (Wayland: GDK exits by itself there).
static inline gboolean orb_on_display_lost(GdkDisplay *display, int (*lost)(void *xdisplay)) {
#ifdef GDK_WINDOWING_X11
  if (display && GDK_IS_X11_DISPLAY(display)) {
    XSetIOErrorHandler((XIOErrorHandler)lost);
    return TRUE;
  }
#endif
  (void)display;
  (void)lost;
  return FALSE;
}

/// Moves a realized window to (x, y) on an X11 display (`--geometry WxH+X+Y`); GTK 4 itself cannot place windows.
/// Returns FALSE elsewhere (Wayland leaves placement to the compositor).
static inline gboolean orb_move_window(GtkWidget *window, int x, int y) {
#ifdef GDK_WINDOWING_X11
  GdkSurface *surface = orb_x11_surface(window);
  if (surface) {
    XMoveWindow(gdk_x11_display_get_xdisplay(gdk_surface_get_display(surface)), gdk_x11_surface_get_xid(surface), x,
                y);
    return TRUE;
  }
#endif
  return FALSE;
}

/// The URIs of what was dropped (a GFile or a GdkFileList in `value`), NULL-terminated; free with g_strfreev.
static inline gchar **orb_dropped_uris(gconstpointer dropped) {
  const GValue *value = dropped;
  GSList *files = NULL;
  gboolean own = FALSE;
  if (G_VALUE_HOLDS(value, GDK_TYPE_FILE_LIST)) {
    files = gdk_file_list_get_files(g_value_get_boxed(value));
    own = TRUE;
  } else if (G_VALUE_HOLDS(value, G_TYPE_FILE)) {
    files = g_slist_prepend(NULL, g_value_get_object(value));
    own = TRUE;
  }
  guint n = g_slist_length(files);
  gchar **uris = g_new0(gchar *, n + 1);
  guint i = 0;
  for (GSList *l = files; l; l = l->next) uris[i++] = g_file_get_uri(G_FILE(l->data));
  if (own) g_slist_free(files);
  return uris;
}

/// A drop target on `widget` for files (a file manager's drag), calling `handler` with `data` on a drop.
static inline gpointer orb_file_drop_target(GtkWidget *widget) {
  GtkDropTarget *target = gtk_drop_target_new(GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  GType types[] = {GDK_TYPE_FILE_LIST, G_TYPE_FILE};
  gtk_drop_target_set_gtypes(target, types, 2);
  gtk_widget_add_controller(widget, GTK_EVENT_CONTROLLER(target));
  return target;
}

/// The URIs chosen in a file chooser, NULL-terminated; free with g_strfreev.
static inline gchar **orb_chosen_uris(gpointer chooser) {
  GListModel *files = gtk_file_chooser_get_files(GTK_FILE_CHOOSER(chooser));
  guint n = g_list_model_get_n_items(files);
  gchar **uris = g_new0(gchar *, n + 1);
  for (guint i = 0; i < n; i++) {
    GFile *file = g_list_model_get_item(files, i);
    uris[i] = g_file_get_uri(file);
    g_object_unref(file);
  }
  g_object_unref(files);
  return uris;
}

// glibc's malloc tuning (malloc.h, which Swift's Glibc module leaves out): blocks up to `mmap_below` bytes come
// from the heap, and up to `keep_free` bytes of free heap stay mapped (see PlayerWindow.keepFrameSizedBlocks).
static inline void orb_malloc_keep(int mmap_below, int keep_free) {
  mallopt(M_MMAP_THRESHOLD, mmap_below);
  mallopt(M_TRIM_THRESHOLD, keep_free);
}

// Gives free heap pages back to the system (start-up's garbage once the first picture is up).
static inline void orb_malloc_trim(void) { malloc_trim(0); }

// Bytes of a picture the size of `window`'s X11 surface (4 a pixel), or 0 where it has none (Wayland, unrealized).
static inline long orb_x11_picture_bytes(GtkWidget *window) {
#ifdef GDK_WINDOWING_X11
  GdkSurface *surface = orb_x11_surface(window);
  if (!surface) return 0;
  long scale = gdk_surface_get_scale_factor(surface);
  return (long)gdk_surface_get_width(surface) * scale * gdk_surface_get_height(surface) * scale * 4;
#else
  return 0;
#endif
}

// Has cairo make the shared-memory pool it uploads `window`'s pictures from, and keeps a 4 KB block of it, so the
// pool outlives each frame (see X11UploadMemory.swift). A window-sized image is asked for first, because cairo sizes
// a pool by the block that makes it (blocks up to the next power of two above it); the small block, asked for
// while that image holds the pool, comes from the same pool and keeps it once the image is gone. Returns the small
// block's surface (cairo_surface_destroy lets it go), or NULL where the window has no X11 surface. Where cairo
// cannot use shared memory, both are plain images and nothing is kept but 4 KB.
static inline cairo_surface_t *orb_x11_keep_upload_pool(GtkWidget *window) {
#ifdef GDK_WINDOWING_X11
  GdkSurface *surface = orb_x11_surface(window);
  if (!surface) return NULL;
  Display *dpy = gdk_x11_display_get_xdisplay(gdk_surface_get_display(surface));
  int scale = gdk_surface_get_scale_factor(surface);
  int width = gdk_surface_get_width(surface) * scale, height = gdk_surface_get_height(surface) * scale;
  if (width < 32 || height < 32) return NULL;
  // The same Display as GTK's, so the same cairo device and its pools.
  cairo_surface_t *target = cairo_xlib_surface_create(
      dpy, gdk_x11_surface_get_xid(surface), DefaultVisual(dpy, DefaultScreen(dpy)), width, height);
  cairo_surface_t *picture = cairo_surface_create_similar_image(target, CAIRO_FORMAT_RGB24, width, height);
  cairo_surface_t *kept = cairo_surface_create_similar_image(target, CAIRO_FORMAT_RGB24, 32, 32);
  cairo_surface_destroy(picture);
  cairo_surface_destroy(target);
  if (cairo_surface_status(kept) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(kept);
    return NULL;
  }
  return kept;
#else
  return NULL;
#endif
}

// A drawing area that assistive technology knows as a picture (its accessible role is set only as it is made, through
// the variadic g_object_new, which Swift cannot call).
static inline GtkWidget *orb_drawing_area_new_image(void) {
  return GTK_WIDGET(g_object_new(GTK_TYPE_DRAWING_AREA, "accessible-role", GTK_ACCESSIBLE_ROLE_IMG, NULL));
}

// gtk_accessible_update_property is variadic, which Swift cannot call.
static inline void orb_set_accessible_label(GtkWidget *widget, const char *label) {
  gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

// libepoxy's GL entry points are mutable global function pointers, which Swift 6 rejects: call them here.

/// Whether the current GL context can import memory exported by Vulkan as an opaque fd.
static inline gboolean orb_gl_has_memory_object_fd(void) {
  return epoxy_has_gl_extension("GL_EXT_memory_object") && epoxy_has_gl_extension("GL_EXT_memory_object_fd");
}

/// The GL device's UUID (GL_EXT_memory_object), to compare with Vulkan's deviceUUID; writes 16 bytes.
static inline void orb_gl_device_uuid(unsigned char out[16]) {
  memset(out, 0, 16);
  GLint count = 0;
  glGetIntegerv(GL_NUM_DEVICE_UUIDS_EXT, &count);
  if (count > 0) glGetUnsignedBytei_vEXT(GL_DEVICE_UUID_EXT, 0, out);
}

/// The GL driver's UUID (GL_EXT_memory_object), to compare with Vulkan's driverUUID; writes 16 bytes.
static inline void orb_gl_driver_uuid(unsigned char out[16]) {
  memset(out, 0, 16);
  glGetUnsignedBytevEXT(GL_DRIVER_UUID_EXT, out);
}

static inline const char *orb_gl_renderer(void) { return (const char *)glGetString(GL_RENDERER); }

/// Imports `fd` holding an RGBA8 optimal-tiling image of `width`x`height` as a GL texture.
/// Returns the texture name, or 0; `memory_out` receives the memory object to delete with the texture.
/// `fd_taken` says whether GL took ownership of `fd` (then the caller must not close it, even on failure).
static inline GLuint orb_gl_import_rgba8(int fd, GLuint64 size, int width, int height, gboolean dedicated,
                                         GLuint *memory_out, gboolean *fd_taken) {
  while (glGetError() != GL_NO_ERROR) {}
  GLuint memory = 0, texture = 0;
  glCreateMemoryObjectsEXT(1, &memory);
  if (dedicated) {
    GLint yes = GL_TRUE;
    glMemoryObjectParameterivEXT(memory, GL_DEDICATED_MEMORY_OBJECT_EXT, &yes);
  }
  glImportMemoryFdEXT(memory, size, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);
  *fd_taken = glGetError() == GL_NO_ERROR;
  if (!*fd_taken) {
    glDeleteMemoryObjectsEXT(1, &memory);
    return 0;
  }
  glGenTextures(1, &texture);
  glBindTexture(GL_TEXTURE_2D, texture);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_TILING_EXT, GL_OPTIMAL_TILING_EXT);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexStorageMem2DEXT(GL_TEXTURE_2D, 1, GL_RGBA8, width, height, memory, 0);
  glBindTexture(GL_TEXTURE_2D, 0);
  if (glGetError() != GL_NO_ERROR) {
    glDeleteTextures(1, &texture);
    glDeleteMemoryObjectsEXT(1, &memory);
    return 0;
  }
  *memory_out = memory;
  return texture;
}

static inline void orb_gl_delete_import(GLuint texture, GLuint memory) {
  if (texture) glDeleteTextures(1, &texture);
  if (memory) glDeleteMemoryObjectsEXT(1, &memory);
}

#endif
