//! Each frame, before the camera schedules run, the plugin's state on every render-world
//! view, in Bevy's render sets:
//!
//! - [`readable_depth`] (`RenderSystems::PrepareResources`, before the depth textures
//!   are made): cameras that draw splats get a depth texture the tile render can read;
//! - [`view_buffers`] (`PrepareResources`): what each view draws ([`draw_plan`]'s
//!   `ViewDraw`), the GPU's counts, times and picks of earlier frames read back, and the
//!   view's buffers sized for this one (`ViewBuffers`, `PassTimestamps`, `ViewPicks`);
//! - [`bind_groups`] (`PrepareBindGroups`): the view's uniforms and the bind groups of
//!   its frame (`SplatFrame`, and `SceneCopy` where the composite reads the scene),
//!   which `record` records.
//!
//! Each is a component on the view, as Bevy's own passes keep theirs; a view that draws
//! no splats loses them all, giving its buffers back.

pub mod bind_groups;
pub mod draw_plan;
pub mod readable_depth;
pub mod view_buffers;
