//! Where the passes' pipelines come from. A pass describes each kernel once (its bind
//! group layout, its WGSL entry file, entry point and shader defs) and asks a
//! [`PipelineBuilder`] for it:
//!
//! - in an app, `render::pipelines::CachedBuilder` queues it on Bevy's
//!   `PipelineCache`, which composes the shader assets and compiles them on its
//!   tasks, so the answer is `None` until the pipeline is ready;
//! - on plain wgpu (the public [`gpu_sort`](crate::gpu_sort) and the kernel tests),
//!   [`DirectBuilder`] composes the same files through a [`ShaderLibrary`] and
//!   compiles them at once.

use std::collections::HashMap;

use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroupLayout, ComputePipeline, Device, ShaderModule};

use super::library::{ShaderChecks, ShaderDef, ShaderLibrary, WgslFile};

/// A WGSL entry file of the passes and whether its module keeps wgpu's runtime checks
/// ([`ShaderChecks`]): in an app, a shader asset of its own
/// (`passes::ENTRY_SHADERS` lists them).
#[derive(Clone, Copy, Debug)]
pub struct EntryShader {
    pub file: WgslFile,
    pub checks: ShaderChecks,
}

/// One compute kernel to build.
#[derive(Clone, Copy, Debug)]
pub struct Kernel<'a> {
    pub label: &'a str,
    pub layout: &'a BindGroupLayoutDescriptor,
    pub shader: EntryShader,
    pub entry_point: &'static str,
    /// The kernel's own defs; the crate's shared ones are added by the builder.
    pub defs: &'a [ShaderDef],
}

/// Builds the passes' bind group layouts and kernels.
pub trait PipelineBuilder {
    /// The device the pipelines are for (passes make their fixed bind groups with it).
    fn device(&self) -> &Device;

    /// The bind group layout `descriptor` describes: the one the kernels made with it
    /// use, so bind groups made with it fit them.
    fn layout(&mut self, descriptor: &BindGroupLayoutDescriptor) -> BindGroupLayout;

    /// `kernel`'s pipeline, or `None` while it is being compiled (ask again later: the
    /// same kernel is queued once).
    fn kernel(&mut self, kernel: &Kernel<'_>) -> Option<ComputePipeline>;
}

/// Builds pipelines on a plain wgpu device, composing through a [`ShaderLibrary`] and
/// compiling each kernel when it is asked for. Like Bevy's cache, it makes one layout
/// per descriptor and one module per file and defs.
pub struct DirectBuilder<'a> {
    device: &'a Device,
    library: &'a mut ShaderLibrary,
    layouts: HashMap<BindGroupLayoutDescriptor, BindGroupLayout>,
    modules: HashMap<(&'static str, Vec<ShaderDef>), ShaderModule>,
}

impl<'a> DirectBuilder<'a> {
    pub fn new(device: &'a Device, library: &'a mut ShaderLibrary) -> Self {
        Self {
            device,
            library,
            layouts: HashMap::new(),
            modules: HashMap::new(),
        }
    }
}

impl PipelineBuilder for DirectBuilder<'_> {
    fn device(&self) -> &Device {
        self.device
    }

    fn layout(&mut self, descriptor: &BindGroupLayoutDescriptor) -> BindGroupLayout {
        let device = self.device;
        self.layouts
            .entry(descriptor.clone())
            .or_insert_with(|| {
                device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some(&descriptor.label),
                    entries: &descriptor.entries,
                })
            })
            .clone()
    }

    fn kernel(&mut self, kernel: &Kernel<'_>) -> Option<ComputePipeline> {
        let layout = self.layout(kernel.layout);
        let EntryShader { file, checks } = kernel.shader;
        let module = self
            .modules
            .entry((file.path, kernel.defs.to_vec()))
            .or_insert_with(|| {
                self.library
                    .module(self.device, kernel.label, file, kernel.defs, checks)
            });
        Some(compute_pipeline(
            self.device,
            kernel.label,
            &layout,
            module,
            kernel.entry_point,
        ))
    }
}

/// A compute pipeline with one bind group. Workgroup memory is not zeroed first: every
/// kernel here writes its workgroup memory before reading it.
fn compute_pipeline(
    device: &Device,
    label: &str,
    layout: &BindGroupLayout,
    module: &wgpu::ShaderModule,
    entry_point: &str,
) -> ComputePipeline {
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(layout)],
        immediate_size: 0,
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&pipeline_layout),
        module,
        entry_point: Some(entry_point),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &[],
            zero_initialize_workgroup_memory: false,
        },
        cache: None,
    })
}
