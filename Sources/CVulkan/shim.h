// Vulkan for Swift: the header, and helpers for macros Swift does not import.
#ifndef ORB_CVULKAN_SHIM_H
#define ORB_CVULKAN_SHIM_H
#include <vulkan/vulkan.h>

// VK_MAKE_API_VERSION is a function-like macro.
static inline uint32_t orb_vk_make_api_version(uint32_t major, uint32_t minor, uint32_t patch) {
  return VK_MAKE_API_VERSION(0, major, minor, patch);
}
// vkGetMemoryFdKHR is an extension entry point: it must be loaded through vkGetDeviceProcAddr.
static inline VkResult orb_vk_get_memory_fd(VkDevice device, const VkMemoryGetFdInfoKHR *info, int *fd) {
  PFN_vkGetMemoryFdKHR fn = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(device, "vkGetMemoryFdKHR");
  if (!fn) return VK_ERROR_EXTENSION_NOT_PRESENT;
  return fn(device, info, fd);
}
#endif
