//! What the GPU's own compiler made of every compute kernel: its registers, shared and
//! local memory, as the Vulkan driver reports them
//! (`VK_KHR_pipeline_executable_properties`). Timing says how long a kernel takes;
//! these say how many of its threads fit on a multiprocessor at once (an H100's
//! 65,536 registers a multiprocessor hold 2,048 threads only at 32 registers or fewer
//! each) and whether it spills.
//!
//! An ignored test, for a machine with a GPU:
//! `cargo test --release --lib kernel_statistics -- --ignored --nocapture`.
//! Each kernel is composed as the app composes it, written to SPIR-V with the runtime
//! checks wgpu would add to it, and compiled through the driver on a device of its own.

use std::collections::BTreeMap;
use std::ffi::CString;

use ash::vk;
use bevy::render::render_resource::BindGroupLayoutDescriptor;
use wgpu::{BindGroupLayout, ComputePipeline, Device};

use super::builder::{DirectBuilder, EntryShader, Kernel, PipelineBuilder};
use super::library::{ShaderChecks, ShaderDef, ShaderLibrary};
use super::radix_sort::SortAlgorithm;
use super::{SplatPipelines, shader_library};

/// One kernel as a pass asked for it.
struct Asked {
    label: String,
    shader: EntryShader,
    entry_point: &'static str,
    defs: Vec<ShaderDef>,
}

/// A builder that builds as [`DirectBuilder`] does and notes every kernel asked of it.
struct Noting<'a> {
    builder: DirectBuilder<'a>,
    asked: Vec<Asked>,
}

impl PipelineBuilder for Noting<'_> {
    fn device(&self) -> &Device {
        self.builder.device()
    }

    fn layout(&mut self, descriptor: &BindGroupLayoutDescriptor) -> BindGroupLayout {
        self.builder.layout(descriptor)
    }

    fn kernel(&mut self, kernel: &Kernel<'_>) -> Option<ComputePipeline> {
        let asked = Asked {
            label: kernel.label.to_string(),
            shader: kernel.shader,
            entry_point: kernel.entry_point,
            defs: kernel.defs.to_vec(),
        };
        let seen = self.asked.iter().any(|a| {
            a.shader.file.path == asked.shader.file.path
                && a.entry_point == asked.entry_point
                && a.defs == asked.defs
        });
        if !seen {
            self.asked.push(asked);
        }
        self.builder.kernel(kernel)
    }
}

/// The SPIR-V wgpu would hand the driver for `asked`: the same bounds checks and loop
/// guards (none where the module is built without them, `ShaderChecks::None`).
fn spirv(library: &mut ShaderLibrary, asked: &Asked) -> (naga::Module, Vec<u32>) {
    use naga::back::spv;
    use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};
    let (module, info) = library
        .compose_validated(asked.shader.file, &asked.defs)
        .expect("the crate's WGSL composes and validates");
    let checked = asked.shader.checks == ShaderChecks::All;
    let index = if checked {
        BoundsCheckPolicy::Restrict
    } else {
        BoundsCheckPolicy::Unchecked
    };
    let options = spv::Options {
        lang_version: (1, 3),
        bounds_check_policies: BoundsCheckPolicies {
            index,
            // Vulkan's robust buffer access covers buffers (wgpu's choice where the
            // device has robustBufferAccess2, as NVIDIA's do).
            buffer: BoundsCheckPolicy::Unchecked,
            image_load: index,
            binding_array: BoundsCheckPolicy::Unchecked,
        },
        force_loop_bounding: checked,
        ..Default::default()
    };
    let pipeline = spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: asked.entry_point.to_string(),
    };
    let words = spv::write_vec(&module, &info, &options, Some(&pipeline))
        .expect("naga writes SPIR-V for every kernel");
    (module, words)
}

/// The descriptor set layouts' bindings the module declares, by group.
fn bindings(module: &naga::Module) -> BTreeMap<u32, Vec<vk::DescriptorSetLayoutBinding<'static>>> {
    use naga::{AddressSpace, ImageClass, TypeInner};
    let mut groups: BTreeMap<u32, Vec<_>> = BTreeMap::new();
    for (_, variable) in module.global_variables.iter() {
        let Some(binding) = &variable.binding else {
            continue;
        };
        let kind = match (variable.space, &module.types[variable.ty].inner) {
            (AddressSpace::Uniform, _) => vk::DescriptorType::UNIFORM_BUFFER,
            (AddressSpace::Storage { .. }, _) => vk::DescriptorType::STORAGE_BUFFER,
            (
                AddressSpace::Handle,
                TypeInner::Image {
                    class: ImageClass::Storage { .. },
                    ..
                },
            ) => vk::DescriptorType::STORAGE_IMAGE,
            (AddressSpace::Handle, TypeInner::Image { .. }) => vk::DescriptorType::SAMPLED_IMAGE,
            (AddressSpace::Handle, TypeInner::Sampler { .. }) => vk::DescriptorType::SAMPLER,
            _ => continue,
        };
        groups.entry(binding.group).or_default().push(
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding.binding)
                .descriptor_type(kind)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE),
        );
    }
    groups
}

/// A Vulkan device of the first adapter that reports pipeline statistics.
struct StatsDevice {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    executables: ash::khr::pipeline_executable_properties::Device,
    name: String,
}

impl StatsDevice {
    fn new() -> Option<Self> {
        // SAFETY: loads the system's Vulkan loader, as wgpu does.
        let entry = unsafe { ash::Entry::load() }.ok()?;
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let instance_info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: a valid create info; the instance is destroyed in `Drop`.
        let instance = unsafe { entry.create_instance(&instance_info, None) }.ok()?;
        let extension = ash::khr::pipeline_executable_properties::NAME;
        // SAFETY: `instance` is alive; the handles it returns are only used with it.
        let chosen = unsafe { instance.enumerate_physical_devices() }
            .ok()?
            .into_iter()
            .find_map(|physical| {
                // SAFETY: as above.
                let has_extension =
                    unsafe { instance.enumerate_device_extension_properties(physical) }
                        .ok()?
                        .iter()
                        .any(|e| e.extension_name_as_c_str() == Ok(extension));
                // SAFETY: as above.
                let family =
                    unsafe { instance.get_physical_device_queue_family_properties(physical) }
                        .iter()
                        .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))?;
                has_extension.then_some((physical, family as u32))
            });
        let Some((physical, family)) = chosen else {
            // SAFETY: nothing made from the instance is alive.
            unsafe { instance.destroy_instance(None) };
            return None;
        };
        // SAFETY: as above.
        let properties = unsafe { instance.get_physical_device_properties(physical) };
        let name = properties
            .device_name_as_c_str()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let extensions = [extension.as_ptr()];
        let mut executable_info =
            vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
                .pipeline_executable_info(true);
        let device_info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .push_next(&mut executable_info);
        // SAFETY: the extension and feature were found on `physical`.
        let device = unsafe { instance.create_device(physical, &device_info, None) }.ok()?;
        let executables = ash::khr::pipeline_executable_properties::Device::new(&instance, &device);
        Some(Self {
            _entry: entry,
            instance,
            device,
            executables,
            name,
        })
    }

    /// The driver's statistics of `words`' entry point, each as (name, value).
    fn statistics(
        &self,
        module: &naga::Module,
        words: &[u32],
        entry_point: &str,
    ) -> Result<Vec<(String, String)>, vk::Result> {
        let device = &self.device;
        let shader_info = vk::ShaderModuleCreateInfo::default().code(words);
        // SAFETY: valid SPIR-V from naga; destroyed below.
        let shader = unsafe { device.create_shader_module(&shader_info, None) }?;
        let groups = bindings(module);
        let last_group = groups.keys().next_back().copied().unwrap_or(0);
        let mut set_layouts = Vec::new();
        for group in 0..=last_group {
            let bindings = groups.get(&group).map_or(&[][..], Vec::as_slice);
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(bindings);
            // SAFETY: bindings from the module, one per (group, binding).
            set_layouts.push(unsafe { device.create_descriptor_set_layout(&info, None) }?);
        }
        let layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        // SAFETY: the set layouts are alive.
        let layout = unsafe { device.create_pipeline_layout(&layout_info, None) }?;
        let name = CString::new(entry_point).expect("entry points have no NUL");
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(shader)
            .name(&name);
        let pipeline_info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout)
            .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR);
        // SAFETY: the shader module and layout are alive.
        let created = unsafe {
            device.create_compute_pipelines(vk::PipelineCache::null(), &[pipeline_info], None)
        };
        let result = created.map_err(|(_, error)| error).and_then(|pipelines| {
            let pipeline = pipelines[0];
            let stats = self.read_statistics(pipeline);
            // SAFETY: made above, used by nothing else.
            unsafe { device.destroy_pipeline(pipeline, None) };
            stats
        });
        // SAFETY: made above; the pipeline made from them is gone.
        unsafe {
            device.destroy_pipeline_layout(layout, None);
            for set_layout in set_layouts {
                device.destroy_descriptor_set_layout(set_layout, None);
            }
            device.destroy_shader_module(shader, None);
        }
        result
    }

    fn read_statistics(&self, pipeline: vk::Pipeline) -> Result<Vec<(String, String)>, vk::Result> {
        let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
        // SAFETY: `pipeline` was made with CAPTURE_STATISTICS on this device.
        let executables = unsafe { self.executables.get_pipeline_executable_properties(&info) }?;
        let mut out = Vec::new();
        for index in 0..executables.len() as u32 {
            let executable = vk::PipelineExecutableInfoKHR::default()
                .pipeline(pipeline)
                .executable_index(index);
            // SAFETY: as above, `index` below the executables' count.
            let statistics = unsafe {
                self.executables
                    .get_pipeline_executable_statistics(&executable)
            }?;
            for statistic in statistics {
                let name = statistic
                    .name_as_c_str()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                // SAFETY: the union's member is the one `format` names.
                let value = unsafe {
                    match statistic.format {
                        vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                            (statistic.value.b32 != 0).to_string()
                        }
                        vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                            statistic.value.i64.to_string()
                        }
                        vk::PipelineExecutableStatisticFormatKHR::UINT64 => {
                            statistic.value.u64.to_string()
                        }
                        _ => format!("{:.3}", statistic.value.f64),
                    }
                };
                out.push((name, value));
            }
        }
        Ok(out)
    }
}

impl Drop for StatsDevice {
    fn drop(&mut self) {
        // SAFETY: everything made from them was destroyed where it was made.
        unsafe {
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// Prints every compute kernel of the splat passes (both sort algorithms' kernels), its
/// workgroup size and defs, with the driver's statistics of it, one line each. (NVIDIA's
/// driver 580 reports "Local Memory Size" as 2^36 plus what we read as the bytes a
/// thread keeps in local memory.)
#[test]
#[ignore = "reads a GPU driver's statistics; run by hand"]
fn kernel_statistics() {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = wgpu::Backends::VULKAN;
    let instance = wgpu::Instance::new(desc);
    let adapter =
        bevy::tasks::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .expect("a Vulkan adapter");
    let (device, _queue) = bevy::tasks::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: adapter.features() & wgpu::Features::SUBGROUP,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .expect("a device");
    let mut library = shader_library();
    let asked = {
        let mut noting = Noting {
            builder: DirectBuilder::new(&device, &mut library),
            asked: Vec::new(),
        };
        for algorithm in [SortAlgorithm::OneSweep, SortAlgorithm::Classic] {
            assert!(SplatPipelines::build(&mut noting, algorithm).is_some());
        }
        noting.asked
    };
    let kernels: Vec<_> = asked
        .iter()
        .map(|kernel| (kernel, spirv(&mut library, kernel)))
        .collect();
    let Some(stats_device) = StatsDevice::new() else {
        eprintln!(
            "{} kernels written to SPIR-V, but no Vulkan device reports pipeline \
             statistics",
            kernels.len()
        );
        return;
    };
    eprintln!("kernel statistics on {}:", stats_device.name);
    for (kernel, (module, words)) in &kernels {
        let line = match stats_device.statistics(module, words, kernel.entry_point) {
            Ok(stats) => stats
                .iter()
                .map(|(name, value)| format!("{name} {value}"))
                .collect::<Vec<_>>()
                .join(", "),
            Err(error) => format!("not compiled: {error}"),
        };
        let threads: u32 = module
            .entry_points
            .iter()
            .find(|e| e.name == kernel.entry_point)
            .map_or(0, |e| e.workgroup_size.iter().product());
        let defs: Vec<String> = kernel.defs.iter().map(|def| format!("{def:?}")).collect();
        eprintln!(
            "{} ({}, {threads} threads, defs [{}]): {line}",
            kernel.label,
            kernel.entry_point,
            defs.join(", ")
        );
    }
}
