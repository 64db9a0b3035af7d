//! pick: for each pointer pixel, the splat where the tile render's front-to-back
//! transmittance first falls to 0.5 (the hit) and its depth, from the band's own
//! sorted tile data.

use wgpu::{BindGroup, Buffer, ComputePass, Device, TextureView};

use super::builder::{EntryShader, PipelineBuilder};
use super::common::{SceneDepthVariants, ShaderChecks, bind_group, storage, uniform};
use super::library::{ShaderDef, wgsl_file};
use super::tile_split::TileLists;

/// Pointer pixels one view picks per frame.
pub const MAX_PICKS: usize = 16;

/// Bytes of one `PickHit` (see `pick.wgsl`): found, instance, splat, depth.
pub const PICK_HIT_BYTES: u64 = 16;

pub(crate) const SHADER: EntryShader = EntryShader {
    file: wgsl_file!("pick.wgsl"),
    checks: ShaderChecks::All,
};

pub struct PickPass {
    /// One per tile list (a tile's place in its bin): see `pick.wgsl`'s `LIST`.
    variants: [SceneDepthVariants; 4],
}

impl PickPass {
    pub fn new(builder: &mut dyn PipelineBuilder) -> Option<Self> {
        let entries = [
            uniform(0, false),
            storage(1, true),
            storage(2, true),
            storage(3, true),
            storage(4, true),
            storage(5, true),
            storage(7, false),
            storage(8, true),
        ];
        let variants: [_; 4] = std::array::from_fn(|list| {
            SceneDepthVariants::new(
                builder,
                &format!("splat pick (list {list})"),
                (&entries, 6),
                (SHADER, "pick"),
                &[ShaderDef::UInt("LIST", list as u32)],
                &[],
            )
        });
        let [a, b, c, d] = variants;
        Some(Self {
            variants: [a?, b?, c?, d?],
        })
    }

    /// Binds one band's tile data to the view's pick pixels and hits: one bind group
    /// per tile list.
    pub fn bind_groups(
        &self,
        device: &Device,
        view_uniform: &Buffer,
        pixels: &Buffer,
        projected: &Buffer,
        sources: &Buffer,
        ranges: &Buffer,
        lists: &TileLists<'_>,
        (scene_depth, multisampled_depth): (&TextureView, bool),
        hits: &Buffer,
        pickable: &Buffer,
    ) -> [BindGroup; 4] {
        std::array::from_fn(|list| {
            bind_group(
                device,
                "splat pick",
                self.variants[list].layout(multisampled_depth),
                &[
                    view_uniform.as_entire_binding(),
                    pixels.as_entire_binding(),
                    projected.as_entire_binding(),
                    sources.as_entire_binding(),
                    ranges.as_entire_binding(),
                    lists.0[list].as_entire_binding(),
                    wgpu::BindingResource::TextureView(scene_depth),
                    hits.as_entire_binding(),
                    pickable.as_entire_binding(),
                ],
            )
        })
    }

    /// One workgroup per pixel and tile list; pixels outside the band, or of tiles of
    /// another list, leave their hit untouched.
    pub fn encode(
        &self,
        pass: &mut ComputePass<'_>,
        bind_groups: &[BindGroup; 4],
        multisampled_depth: bool,
        pixels: u32,
    ) {
        if pixels == 0 {
            return;
        }
        for (variants, bind_group) in self.variants.iter().zip(bind_groups) {
            pass.set_pipeline(variants.pipeline(multisampled_depth));
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(pixels, 1, 1);
        }
    }
}
