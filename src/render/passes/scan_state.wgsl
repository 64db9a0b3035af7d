// Prefix scan: the records of its state buffer, which the setup (scan_setup.wgsl)
// writes and the level kernels (scan.wgsl) read; the twins of `ScanConfig` and
// `ScanLevel` in scan.rs, compared field by field with them by passes/contract.rs.
// The state is one record of SCAN_RECORD_BYTES (256 bytes, so that each can be bound
// on its own) for the configuration, then one per level.
#define_import_path bevy_splat::scan::state

// Record 0, written by the host.
struct ScanConfig {
    // The word index of n in the setup's `count_src`.
    count_word: u32,
    // Most values one scan handles: a larger n is clamped to it.
    capacity: u32,
    // Levels of the hierarchy (level 0 is the values).
    levels: u32,
}

// Record 1 + k: level k, written by the setup (`total_word` by the host).
struct ScanLevel {
    // Values in the level.
    count: u32,
    // The level kernels' grid: indirect dispatch arguments (x, y, z).
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    // Workgroups that do work (the grid's last row may have more).
    groups: u32,
    // The word index of the total in the top kernel's `total_out`.
    total_word: u32,
}
