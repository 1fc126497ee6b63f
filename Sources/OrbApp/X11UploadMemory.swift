import CGtk

/// Keeps the shared memory that cairo uploads a window's pictures through mapped from one frame to the next: GTK's
/// cairo renderer on X11 (a machine with no GPU).
///
/// Each frame GTK paints the window into an image, and cairo copies that image into a block of a MIT-SHM segment
/// (a "pool") for `XShmPutImage`. cairo 1.16 makes a pool for the first block asked of it, sized by that block, and
/// destroys it as soon as its last block is freed, which is right after each frame's upload. So every frame mapped a
/// fresh window-sized segment and the kernel faulted it in a zeroed page at a time: some 900 pages a frame at
/// 1280x720, a fifth of the player's CPU for 1080p30 (`perf`: shmem faults under pixman's copy), 0.9-1.4 s of
/// system time in 10 s, now 0.2-0.3 s.
/// A 4 KB block kept from a pool that can hold the window's picture keeps that pool; each frame's upload then takes
/// the same block of it, whose pages are already there. The pool is made again when the window's picture needs
/// blocks of another power-of-two size (a resize past one; the old pool goes first, so a smaller window does not keep
/// a larger one's pages). The memory kept is what each frame mapped anyway, plus 4 KB.
/// Thread-safety: Unsafe; GTK's main thread only, where cairo draws the window.
final class X11UploadMemory {
  private var kept: OpaquePointer?
  /// The power of two of the block size the kept pool was made for (0: none).
  private var blockBits = 0

  /// Makes sure a pool for `window`'s picture size is kept (cheap when it is: the size is compared).
  func keep(for window: UnsafeMutablePointer<GtkWidget>) {
    let bytes = orb_x11_picture_bytes(window)
    guard bytes > 0 else { return }
    let bits = Int.bitWidth - (bytes - 1).leadingZeroBitCount
    guard bits != blockBits else { return }
    letGo()
    kept = orb_x11_keep_upload_pool(window)
    blockBits = kept == nil ? 0 : bits
  }

  private func letGo() {
    if let kept { cairo_surface_destroy(kept) }
    kept = nil
    blockBits = 0
  }

  isolated deinit { letGo() }
}
