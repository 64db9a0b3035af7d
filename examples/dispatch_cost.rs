//! What a compute dispatch costs the GPU before it does any work: runs of 128 tiny
//! dispatches (one workgroup each) recorded in the ways the splat passes record
//! theirs, each run timed with timestamps around it, median of 25 runs, in µs per
//! dispatch. A small shadow view records some 18 such dispatches whatever it draws
//! (BENCHMARKS.md), so this is the floor under every view.
//!
//! ```text
//! WGPU_BACKEND=vulkan cargo run --release --example dispatch_cost
//! ```
//!
//! The forms:
//! - `same buffer, one pass`: each dispatch reads and writes the buffer the one
//!   before wrote, so wgpu puts a barrier between them (most of a view's stages);
//! - `own buffers, one pass`: each writes a buffer of its own, so none waits;
//! - `same buffer, a pass each`: as the first, each in its own compute pass (the
//!   stages, which each get a pass to be timed);
//! - `own buffers, a pass each`: as the second, each in its own compute pass;
//! - `indirect, fixed arguments`: as the first, dispatched indirectly from arguments
//!   written before the run;
//! - `indirect, arguments just written`: pairs of a kernel that writes the next
//!   dispatch's arguments and that dispatch (the counts-to-grids pattern of
//!   `indirect.wgsl`), per dispatch of the pair;
//! - `a clear, then a pass on that buffer`: as `own buffers, a pass each`, each pass
//!   after a `clear_buffer` of its buffer (a view's counters, cleared before its
//!   stages);
//! - `an empty render pass on a depth map`: a render pass over a 2048² depth texture
//!   that loads and stores it and draws nothing (a shadow view's depth write, less
//!   its draw), per pass.
//! - `clear a 1080p target`, `copy a 1080p target`: the two halves of the next form
//!   alone, per pass or copy;
//! - `clear and copy a 1080p target`: a render pass that clears a 1920×1080
//!   `Rgba16Float` texture with the usages of an HDR camera's main texture, then a
//!   copy of it into another texture (the compute composite's copy of the scene
//!   behind), per pair;
//! - `the same, storage usage`: the target also takes storage writes, as a camera's
//!   main texture must for the compute composite (`headless::composite_by_compute`);
//! - `the same, then a storage write`: then one workgroup writes 64 of its pixels as
//!   a storage texture (the compute composite's writes, less their work), per triple.
//!
//! The last three tell where a camera's span grows by 0.29 ms at 1080p when its main
//! texture takes storage writes (BENCHMARKS.md, "The compute composite").

use std::time::Instant;

use bevy::tasks::block_on;
use wgpu::util::DeviceExt;

const DISPATCHES: usize = 128;
const RUNS: usize = 25;

const SHADER: &str = "
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> args: array<u32>;

@compute @workgroup_size(64)
fn touch(@builtin(local_invocation_index) i: u32) {
    data[i] = data[i] + 1u;
}

@compute @workgroup_size(1)
fn write_args() {
    args[0] = 1u;
    args[1] = 1u;
    args[2] = 1u;
    data[0] = data[0] + 1u;
}
";

// One workgroup's storage writes into a camera-like target.
const STORE_SHADER: &str = "
@group(0) @binding(0) var image: texture_storage_2d<rgba16float, write>;

@compute @workgroup_size(8, 8)
fn store(@builtin(local_invocation_id) i: vec3<u32>) {
    textureStore(image, vec2<i32>(i.xy), vec4<f32>(0.5));
}
";

/// An HDR camera's main texture at 1080p.
const TARGET_SIZE: wgpu::Extent3d = wgpu::Extent3d {
    width: 1920,
    height: 1080,
    depth_or_array_layers: 1,
};
const TARGET_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;

#[derive(Clone, Copy)]
enum Form {
    SameBufferOnePass,
    OwnBuffersOnePass,
    SameBufferPassEach,
    OwnBuffersPassEach,
    IndirectFixed,
    IndirectJustWritten,
    ClearThenPass,
    DepthPassEach,
    TargetClearOnly,
    TargetCopyOnly,
    TargetCopy,
    StorageTargetCopy,
    StorageTargetCopyStore,
}

impl Form {
    const ALL: [Form; 13] = [
        Form::SameBufferOnePass,
        Form::OwnBuffersOnePass,
        Form::SameBufferPassEach,
        Form::OwnBuffersPassEach,
        Form::IndirectFixed,
        Form::IndirectJustWritten,
        Form::ClearThenPass,
        Form::DepthPassEach,
        Form::TargetClearOnly,
        Form::TargetCopyOnly,
        Form::TargetCopy,
        Form::StorageTargetCopy,
        Form::StorageTargetCopyStore,
    ];

    fn name(self) -> &'static str {
        match self {
            Form::SameBufferOnePass => "same buffer, one pass",
            Form::OwnBuffersOnePass => "own buffers, one pass",
            Form::SameBufferPassEach => "same buffer, a pass each",
            Form::OwnBuffersPassEach => "own buffers, a pass each",
            Form::IndirectFixed => "indirect, fixed arguments",
            Form::IndirectJustWritten => "indirect, arguments just written",
            Form::ClearThenPass => "a clear, then a pass on that buffer",
            Form::DepthPassEach => "an empty render pass on a depth map",
            Form::TargetClearOnly => "clear a 1080p target",
            Form::TargetCopyOnly => "copy a 1080p target",
            Form::TargetCopy => "clear and copy a 1080p target",
            Form::StorageTargetCopy => "the same, storage usage",
            Form::StorageTargetCopyStore => "the same, then a storage write",
        }
    }
}

struct Kit {
    device: wgpu::Device,
    queue: wgpu::Queue,
    touch: wgpu::ComputePipeline,
    write_args: wgpu::ComputePipeline,
    /// `touch` over the buffer every dispatch of the `same buffer` forms shares.
    shared_group: wgpu::BindGroup,
    /// The buffers of the `own buffers` forms, one a dispatch, and `touch` over each.
    own: Vec<wgpu::Buffer>,
    own_groups: Vec<wgpu::BindGroup>,
    /// A 2048² depth map, as a light's.
    depth: wgpu::TextureView,
    /// Camera-like targets without and with storage usage, and the copy of either.
    target: wgpu::Texture,
    storage_target: wgpu::Texture,
    scene_copy: wgpu::Texture,
    /// One workgroup's storage writes into `storage_target`.
    store: wgpu::ComputePipeline,
    store_group: wgpu::BindGroup,
    /// `write_args` over the shared buffer and the arguments.
    args_group: wgpu::BindGroup,
    args: wgpu::Buffer,
    queries: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    readback: wgpu::Buffer,
}

fn main() {
    // Bevy's release builds leave out wgpu's validation of indirect arguments (an
    // extra dispatch before each indirect one) on every backend but DX12; wgpu's own
    // default keeps it. Both are timed.
    for validated in [false, true] {
        let mut flags = wgpu::InstanceFlags::default();
        flags.set(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL, validated);
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.flags = flags.with_env();
        if wgpu::Backends::from_env().is_none() {
            desc.backends = wgpu::Backends::VULKAN;
        }
        let Some(kit) = Kit::for_instance(&wgpu::Instance::new(desc)) else {
            std::process::exit(1);
        };
        println!(
            "{:<36} {:>8} {:>8} {:>8}   (µs per dispatch or pass, {DISPATCHES} a run, {RUNS} runs; \
             indirect arguments {}validated)",
            "form",
            "median",
            "p10",
            "p90",
            if validated { "" } else { "not " }
        );
        for form in Form::ALL {
            kit.run(form); // warm-up: pipelines, buffer states
            let mut per_dispatch: Vec<f64> = (0..RUNS).map(|_| kit.run(form)).collect();
            per_dispatch.sort_by(f64::total_cmp);
            let at = |q: f64| per_dispatch[((RUNS - 1) as f64 * q).round() as usize];
            println!(
                "{:<36} {:>8.2} {:>8.2} {:>8.2}",
                form.name(),
                at(0.5),
                at(0.1),
                at(0.9)
            );
        }
    }
}

fn begin_pass(encoder: &mut wgpu::CommandEncoder) -> wgpu::ComputePass<'_> {
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default())
}

/// A render pass that clears `target` and draws nothing.
fn clear(encoder: &mut wgpu::CommandEncoder, target: &wgpu::TextureView) {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("clear target"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: target,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    });
}

impl Kit {
    /// The first adapter's device with timestamps, and the kernels; `None`, said why,
    /// where there is none.
    fn for_instance(instance: &wgpu::Instance) -> Option<Self> {
        let Ok(adapter) = block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        })) else {
            eprintln!("no GPU adapter (set WGPU_BACKEND, install a Vulkan driver)");
            return None;
        };
        let wanted =
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        if !adapter.features().contains(wanted) {
            eprintln!("the adapter has no timestamps inside encoders");
            return None;
        }
        let Ok((device, queue)) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("dispatch cost"),
            required_features: wanted,
            ..Default::default()
        })) else {
            eprintln!("the adapter gave no device");
            return None;
        };
        let info = adapter.get_info();
        println!(
            "{} ({:?}, driver {})",
            info.name, info.backend, info.driver_info
        );
        Some(Self::new(device, queue))
    }

    fn new(device: wgpu::Device, queue: wgpu::Queue) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("dispatch cost"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let touch = pipeline("touch");
        let write_args = pipeline("write_args");
        let storage = |label: &str| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &[0; 256],
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            })
        };
        let touch_group = |buffer: &wgpu::Buffer| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("touch"),
                layout: &touch.get_bind_group_layout(0),
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: buffer.as_entire_binding(),
                }],
            })
        };
        let shared = storage("shared");
        let own: Vec<_> = (0..DISPATCHES).map(|_| storage("own")).collect();
        let args = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("arguments"),
            contents: bytemuck::cast_slice(&[1u32, 1, 1, 0]),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
        });
        let args_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("write arguments"),
            layout: &write_args.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: shared.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: args.as_entire_binding(),
                },
            ],
        });
        let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("dispatch cost"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolved = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps read back"),
            size: 16,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let depth = device
            .create_texture(&wgpu::TextureDescriptor {
                label: Some("depth map"),
                size: wgpu::Extent3d {
                    width: 2048,
                    height: 2048,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Depth32Float,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            })
            .create_view(&Default::default());
        let texture = |label: &str, usage: wgpu::TextureUsages| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: TARGET_SIZE,
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: TARGET_FORMAT,
                usage,
                view_formats: &[],
            })
        };
        let camera_usage = wgpu::TextureUsages::RENDER_ATTACHMENT
            | wgpu::TextureUsages::TEXTURE_BINDING
            | wgpu::TextureUsages::COPY_SRC;
        let target = texture("target", camera_usage);
        let storage_target = texture(
            "storage target",
            camera_usage | wgpu::TextureUsages::STORAGE_BINDING,
        );
        let scene_copy = texture(
            "scene copy",
            wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::TEXTURE_BINDING,
        );
        let store_module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("storage write"),
            source: wgpu::ShaderSource::Wgsl(STORE_SHADER.into()),
        });
        let store = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("store"),
            layout: None,
            module: &store_module,
            entry_point: Some("store"),
            compilation_options: Default::default(),
            cache: None,
        });
        let store_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("store"),
            layout: &store.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(
                    &storage_target.create_view(&Default::default()),
                ),
            }],
        });
        Self {
            target,
            storage_target,
            scene_copy,
            store,
            store_group,
            shared_group: touch_group(&shared),
            own_groups: own.iter().map(touch_group).collect(),
            own,
            depth,
            device,
            queue,
            touch,
            write_args,
            args_group,
            args,
            queries,
            resolved,
            readback,
        }
    }

    /// `touch` over the buffer dispatch `i` of `form` writes: its own, or the shared one.
    fn touch_group(&self, form: Form, i: usize) -> &wgpu::BindGroup {
        match form {
            Form::OwnBuffersOnePass | Form::OwnBuffersPassEach | Form::ClearThenPass => {
                &self.own_groups[i]
            }
            _ => &self.shared_group,
        }
    }

    /// One run of `form`: GPU µs per dispatch.
    fn run(&self, form: Form) -> f64 {
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.write_timestamp(&self.queries, 0);
        match form {
            Form::SameBufferOnePass | Form::OwnBuffersOnePass | Form::IndirectFixed => {
                let mut pass = begin_pass(&mut encoder);
                pass.set_pipeline(&self.touch);
                for i in 0..DISPATCHES {
                    pass.set_bind_group(0, self.touch_group(form, i), &[]);
                    match form {
                        Form::IndirectFixed => pass.dispatch_workgroups_indirect(&self.args, 0),
                        _ => pass.dispatch_workgroups(1, 1, 1),
                    }
                }
            }
            Form::SameBufferPassEach | Form::OwnBuffersPassEach | Form::ClearThenPass => {
                for i in 0..DISPATCHES {
                    if matches!(form, Form::ClearThenPass) {
                        encoder.clear_buffer(&self.own[i], 0, None);
                    }
                    let mut pass = begin_pass(&mut encoder);
                    pass.set_pipeline(&self.touch);
                    pass.set_bind_group(0, self.touch_group(form, i), &[]);
                    pass.dispatch_workgroups(1, 1, 1);
                }
            }
            Form::DepthPassEach => {
                for _ in 0..DISPATCHES {
                    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                        label: Some("empty depth pass"),
                        color_attachments: &[],
                        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                            view: &self.depth,
                            depth_ops: Some(wgpu::Operations {
                                load: wgpu::LoadOp::Load,
                                store: wgpu::StoreOp::Store,
                            }),
                            stencil_ops: None,
                        }),
                        timestamp_writes: None,
                        occlusion_query_set: None,
                        multiview_mask: None,
                    });
                }
            }
            Form::TargetClearOnly
            | Form::TargetCopyOnly
            | Form::TargetCopy
            | Form::StorageTargetCopy
            | Form::StorageTargetCopyStore => {
                let target = match form {
                    Form::StorageTargetCopy | Form::StorageTargetCopyStore => &self.storage_target,
                    _ => &self.target,
                };
                let view = target.create_view(&Default::default());
                let clears = !matches!(form, Form::TargetCopyOnly);
                let copies = !matches!(form, Form::TargetClearOnly);
                for _ in 0..DISPATCHES {
                    if clears {
                        clear(&mut encoder, &view);
                    }
                    if copies {
                        encoder.copy_texture_to_texture(
                            target.as_image_copy(),
                            self.scene_copy.as_image_copy(),
                            TARGET_SIZE,
                        );
                    }
                    if matches!(form, Form::StorageTargetCopyStore) {
                        let mut pass = begin_pass(&mut encoder);
                        pass.set_pipeline(&self.store);
                        pass.set_bind_group(0, &self.store_group, &[]);
                        pass.dispatch_workgroups(1, 1, 1);
                    }
                }
            }
            Form::IndirectJustWritten => {
                let mut pass = begin_pass(&mut encoder);
                for _ in 0..DISPATCHES / 2 {
                    pass.set_pipeline(&self.write_args);
                    pass.set_bind_group(0, &self.args_group, &[]);
                    pass.dispatch_workgroups(1, 1, 1);
                    pass.set_pipeline(&self.touch);
                    pass.set_bind_group(0, &self.shared_group, &[]);
                    pass.dispatch_workgroups_indirect(&self.args, 0);
                }
            }
        }
        encoder.write_timestamp(&self.queries, 1);
        encoder.resolve_query_set(&self.queries, 0..2, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.readback, 0, 16);
        let started = Instant::now();
        self.queue.submit([encoder.finish()]);
        let slice = self.readback.slice(..);
        slice.map_async(wgpu::MapMode::Read, |_| {});
        if self
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .is_err()
        {
            eprintln!("the device was lost");
            std::process::exit(1);
        }
        let ticks: [u64; 2] = {
            let view = slice.get_mapped_range();
            bytemuck::pod_read_unaligned(&view[..16])
        };
        self.readback.unmap();
        let ns =
            ticks[1].saturating_sub(ticks[0]) as f64 * f64::from(self.queue.get_timestamp_period());
        if ns == 0.0 {
            // No timestamps ticked (some software adapters): the wall clock instead.
            return started.elapsed().as_secs_f64() * 1e6 / DISPATCHES as f64;
        }
        ns / 1e3 / DISPATCHES as f64
    }
}
