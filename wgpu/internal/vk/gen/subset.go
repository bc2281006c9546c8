package main

// The subset of Vulkan that package vk exposes: the commands wgpu calls and the structs it chains through pNext.
// Every type these reference is generated too (transitively); nothing else is.

// globalCommands are loaded with vkGetInstanceProcAddr(NULL, name).
var globalCommands = []string{
	"vkCreateInstance",
	"vkEnumerateInstanceVersion",
	"vkEnumerateInstanceLayerProperties",
	"vkEnumerateInstanceExtensionProperties",
}

// instanceCommands are loaded with vkGetInstanceProcAddr(instance, name).
var instanceCommands = []string{
	"vkDestroyInstance",
	"vkEnumeratePhysicalDevices",
	"vkGetPhysicalDeviceProperties",
	"vkGetPhysicalDeviceProperties2",
	"vkGetPhysicalDeviceFeatures2",
	"vkGetPhysicalDeviceQueueFamilyProperties",
	"vkGetPhysicalDeviceMemoryProperties",
	"vkGetPhysicalDeviceMemoryProperties2",
	"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
	"vkEnumerateDeviceExtensionProperties",
	"vkCreateDevice",
	"vkGetDeviceProcAddr",
	"vkCreateDebugUtilsMessengerEXT",
	"vkDestroyDebugUtilsMessengerEXT",
}

// deviceCommands are loaded with vkGetDeviceProcAddr(device, name).
var deviceCommands = []string{
	"vkDestroyDevice",
	"vkDeviceWaitIdle",
	"vkGetDeviceQueue",
	"vkCreateBuffer",
	"vkDestroyBuffer",
	"vkGetBufferMemoryRequirements",
	"vkAllocateMemory",
	"vkFreeMemory",
	"vkBindBufferMemory",
	"vkMapMemory",
	"vkUnmapMemory",
	"vkCreateShaderModule",
	"vkDestroyShaderModule",
	"vkCreateDescriptorSetLayout",
	"vkDestroyDescriptorSetLayout",
	"vkCreatePipelineLayout",
	"vkDestroyPipelineLayout",
	"vkCreatePipelineCache",
	"vkDestroyPipelineCache",
	"vkGetPipelineCacheData",
	"vkCreateComputePipelines",
	"vkDestroyPipeline",
	"vkCreateDescriptorPool",
	"vkDestroyDescriptorPool",
	"vkAllocateDescriptorSets",
	"vkFreeDescriptorSets",
	"vkUpdateDescriptorSets",
	"vkCreateCommandPool",
	"vkDestroyCommandPool",
	"vkResetCommandPool",
	"vkAllocateCommandBuffers",
	"vkBeginCommandBuffer",
	"vkEndCommandBuffer",
	"vkCmdBindPipeline",
	"vkCmdBindDescriptorSets",
	"vkCmdPushConstants",
	"vkCmdDispatch",
	"vkCmdPipelineBarrier",
	"vkCmdCopyBuffer",
	"vkCmdFillBuffer",
	"vkCmdResetQueryPool",
	"vkCmdWriteTimestamp",
	"vkCmdCopyQueryPoolResults",
	"vkCreateQueryPool",
	"vkDestroyQueryPool",
	"vkGetQueryPoolResults",
	"vkCreateFence",
	"vkDestroyFence",
	"vkWaitForFences",
	"vkResetFences",
	"vkGetFenceStatus",
	"vkQueueSubmit",
	"vkQueueWaitIdle",
	"vkGetPipelineExecutablePropertiesKHR",
	"vkGetPipelineExecutableStatisticsKHR",
}

// extraStructs are reached only through pNext chains, so no command names them.
var extraStructs = []string{
	"VkPhysicalDeviceSubgroupProperties",
	"VkPhysicalDeviceSubgroupSizeControlProperties",
	"VkPhysicalDeviceSubgroupSizeControlFeatures",
	"VkPipelineShaderStageRequiredSubgroupSizeCreateInfo",
	"VkPhysicalDeviceIDProperties",
	"VkPhysicalDeviceDriverProperties",
	"VkPhysicalDeviceMaintenance3Properties",
	"VkPhysicalDevice16BitStorageFeatures",
	"VkPhysicalDeviceShaderFloat16Int8Features",
	"VkPhysicalDeviceVulkanMemoryModelFeatures",
	"VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures",
	"VkPhysicalDeviceUniformBufferStandardLayoutFeatures",
	"VkPhysicalDeviceMemoryBudgetPropertiesEXT",
	"VkDebugUtilsMessengerCallbackDataEXT",
	"VkValidationFeaturesEXT",
	"VkLayerSettingsCreateInfoEXT",
	"VkPhysicalDeviceCooperativeMatrixFeaturesKHR",
	"VkPhysicalDeviceCooperativeMatrixPropertiesKHR",
	"VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR",
}

// apiConstants are the "API Constants" enums exported as untyped constants.
var apiConstants = []string{
	"VK_UUID_SIZE", "VK_MAX_PHYSICAL_DEVICE_NAME_SIZE", "VK_MAX_EXTENSION_NAME_SIZE", "VK_MAX_DESCRIPTION_SIZE",
	"VK_MAX_MEMORY_TYPES", "VK_MAX_MEMORY_HEAPS", "VK_MAX_DRIVER_NAME_SIZE", "VK_MAX_DRIVER_INFO_SIZE",
	"VK_LUID_SIZE", "VK_WHOLE_SIZE", "VK_TRUE", "VK_FALSE", "VK_QUEUE_FAMILY_IGNORED",
}
