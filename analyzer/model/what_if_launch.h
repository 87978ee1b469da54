// How the advice models a launch changed in one respect (block size, registers, shared memory,
// barriers): the other inputs are held as recorded, except what belonged only to the launch as
// it ran. Shared by the curves and the advisors.
#pragma once

#include <string>

#include "analyzer/model/arch_table.h"
#include "analyzer/model/occupancy.h"

namespace occ {

// The launch as the model's starting point for a change: the executed carveout belongs to the
// launch as it ran (the driver picks the carveout per launch from its needs and preference), so
// a different configuration is modelled with the carveout the driver would pick, i.e. from the
// preference.
LaunchParams WhatIf(const LaunchParams& launch);

// The largest block size to try: the device's limit, or __launch_bounds__ when lower.
int BlockSizeLimit(const DeviceProps& device, const LaunchParams& launch);

// The largest user shared memory (static + dynamic) per block the launch may ask for.
int MaxUserSmem(const DeviceProps& device, const LaunchParams& launch, const ArchConstants& arch);

// The launch using `user` bytes of shared memory per block, its static part kept where possible.
LaunchParams WithUserSmem(const DeviceProps& device, const LaunchParams& launch, int user);

// "32 registers/thread and 4 KiB of shared memory per block unchanged": what a block-size
// change holds fixed.
std::string HeldFixed(const LaunchParams& launch);

}  // namespace occ
