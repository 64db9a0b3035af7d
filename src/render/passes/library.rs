//! The shader library: every WGSL file of the passes, composed with naga_oil (the
//! composer Bevy's own shaders go through).
//!
//! Shared code lives in modules with a `#define_import_path bevy_splat::…` that a pass
//! brings in with `#import`; variants (the tile size, the SH layout, multisampled scene
//! depth, a pick's list) are shader defs. The passes and the plain-wgpu kernel tests
//! compose through the same [`ShaderLibrary`], so what a test runs is what a frame
//! runs.

use std::collections::HashMap;

use naga_oil::compose::{
    ComposableModuleDescriptor, Composer, ComposerError, NagaModuleDescriptor, ShaderDefValue,
    ShaderLanguage, ShaderType,
};

/// A WGSL file of the crate: its path (for error messages and naga_oil's module
/// bookkeeping) and its text.
#[derive(Clone, Copy, Debug)]
pub struct WgslFile {
    pub path: &'static str,
    pub text: &'static str,
}

/// A [`WgslFile`] beside the calling module, embedded at compile time.
macro_rules! wgsl_file {
    ($name:literal) => {
        $crate::render::passes::library::WgslFile {
            path: concat!("bevy_splat/render/passes/", $name),
            text: include_str!($name),
        }
    };
}
pub(crate) use wgsl_file;

/// Calls `$then!` with the files of the modules a pass may import (beside this file),
/// in an order where each comes after what it imports: the one list both the
/// [`ShaderLibrary`] and an app's shader assets ([`load_library_modules`]) are made
/// from.
macro_rules! with_library_module_files {
    ($then:ident $(, $arg:expr)?) => {
        $then!(
            $($arg,)?
            "common_grid.wgsl",
            "common.wgsl",
            "preprocess_types.wgsl",
            "preprocess_lod.wgsl",
            "preprocess_full.wgsl",
            "preprocess_compact.wgsl",
            "preprocess_hook.wgsl",
            "preprocess_no_shader.wgsl",
            // The prefix scan's records (`bevy_splat::scan::state`).
            "scan_state.wgsl",
            "scan_block.wgsl",
            // The radix sort's (`bevy_splat::radix_sort::…`); the scatter imports both
            // ways of finding a block's first slots, one by the def `SORT_ONESWEEP`.
            "radix_sort/state.wgsl",
            "radix_sort/prepare.wgsl",
            "radix_sort/keys.wgsl",
            "radix_sort/classic_slots.wgsl",
            "radix_sort/look_back.wgsl",
            "radix_sort/scatter.wgsl"
        )
    };
}

/// The modules a pass may import, in an order where each comes after what it imports.
fn library_modules() -> Vec<WgslFile> {
    macro_rules! files {
        ($($path:literal),*) => { vec![$(wgsl_file!($path)),*] };
    }
    with_library_module_files!(files)
}

/// Adds every library module to an app as a shader library (Bevy's
/// `load_shader_library!`: an embedded asset, kept loaded), where Bevy's
/// `PipelineCache` finds what the passes' entry shaders `#import`.
pub(crate) fn load_library_modules(app: &mut bevy::app::App) {
    macro_rules! load {
        ($app:expr, $($path:literal),*) => { $(bevy::shader::load_shader_library!($app, $path);)* };
    }
    with_library_module_files!(load, app);
}

/// The import path of a `SplatShader`'s module, which the preprocess imports
/// `modify_splat` from under the shader def `SPLAT_SHADER`.
pub const USER_SHADER_PATH: &str = "bevy_splat::preprocess::user_shader";

/// A shader def of one pass: a flag (`#ifdef`) or a value (`#{NAME}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShaderDef {
    Flag(&'static str),
    UInt(&'static str, u32),
}

/// Whether a module keeps wgpu's shader runtime checks. wgpu guards every loop against
/// running forever (a counter and a test per iteration) and clamps every array index
/// it cannot prove in range; on an H200 those guards made the radix sort's kernels
/// 1.5–1.7× slower and the tile render 12 % (BENCHMARKS.md). A module drops them only where
/// its own code makes them needless.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShaderChecks {
    /// All of wgpu's checks.
    All,
    /// No loop guards and no index checks: every loop of the module runs a count of
    /// iterations bounded by a constant or by a buffer's range, and every index it
    /// computes is in range by construction (checked against the CPU by the module's
    /// tests). Storage buffers keep the driver's robust access where it has one
    /// (Vulkan's `robustBufferAccess`); browsers check WebGPU shaders themselves.
    None,
}

/// The composer, holding every library module; builds the passes' shader modules.
pub struct ShaderLibrary {
    composer: Composer,
    /// Defs every module is composed with: the sizes the host and the WGSL share
    /// (`passes::crate_defs`).
    defs: Vec<ShaderDef>,
}

impl ShaderLibrary {
    /// A composer with every library module added, each composed with `defs` beside
    /// its own. The modules are the crate's own text, checked by the tests: one that
    /// fails to parse is a bug in this crate.
    pub fn new(defs: Vec<ShaderDef>) -> Self {
        // A validating composer, as Bevy's `PipelineCache` has: it also checks that
        // every module's interface survives being written back as WGSL, so what
        // composes here composes in an app. wgpu checks the result against the
        // device's own capabilities; the composer allows any.
        let mut composer = Composer::default().with_capabilities(naga::valid::Capabilities::all());
        for file in library_modules() {
            let added = composer.add_composable_module(ComposableModuleDescriptor {
                source: file.text,
                file_path: file.path,
                language: ShaderLanguage::Wgsl,
                shader_defs: def_map(&defs, &[]),
                ..Default::default()
            });
            if let Err(error) = added {
                let message = error.emit_to_string(&composer);
                panic!(
                    "bevy_splat's WGSL module {} does not compose: {message}",
                    file.path
                );
            }
        }
        Self { composer, defs }
    }

    /// The library with an app's splat shader added as [`USER_SHADER_PATH`]; an error
    /// names what in `wgsl` did not compose.
    pub fn with_user_shader(&self, name: &str, wgsl: &str) -> Result<Self, String> {
        let mut library = Self::new(self.defs.clone());
        let file_path = format!("splat shader \"{name}\"");
        let added = library
            .composer
            .add_composable_module(ComposableModuleDescriptor {
                source: wgsl,
                file_path: &file_path,
                language: ShaderLanguage::Wgsl,
                as_name: Some(USER_SHADER_PATH.to_string()),
                shader_defs: def_map(&self.defs, &[]),
                ..Default::default()
            });
        match added {
            Ok(_) => Ok(library),
            Err(error) => Err(error.emit_to_string(&library.composer)),
        }
    }

    /// `file` composed with its imports and `defs` as naga IR.
    pub fn compose(
        &mut self,
        file: WgslFile,
        shader_defs: &[ShaderDef],
    ) -> Result<naga::Module, String> {
        self.composer
            .make_naga_module(NagaModuleDescriptor {
                source: file.text,
                file_path: file.path,
                shader_type: ShaderType::Wgsl,
                shader_defs: def_map(&self.defs, shader_defs),
                additional_imports: &[],
            })
            .map_err(|error: ComposerError| error.emit_to_string(&self.composer))
    }

    /// [`Self::compose`], validated: the module and what naga's writers need of it. An
    /// error names what did not compose or validate.
    pub fn compose_validated(
        &mut self,
        file: WgslFile,
        shader_defs: &[ShaderDef],
    ) -> Result<(naga::Module, naga::valid::ModuleInfo), String> {
        use naga::valid::{Capabilities, ValidationFlags, Validator};
        let module = self.compose(file, shader_defs)?;
        let info = Validator::new(ValidationFlags::all(), Capabilities::all())
            .validate(&module)
            .map_err(|error| error.as_inner().to_string())?;
        Ok((module, info))
    }

    /// `file` composed with `defs` and written back as one WGSL text with no imports:
    /// how an app's splat shader variants reach Bevy's `PipelineCache`, whose single
    /// composer cannot hold one import path (the hook's) once per shader. An error
    /// names what did not compose or validate.
    pub fn compose_wgsl(
        &mut self,
        file: WgslFile,
        shader_defs: &[ShaderDef],
    ) -> Result<String, String> {
        let (module, info) = self.compose_validated(file, shader_defs)?;
        naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
            .map_err(|error| error.to_string())
    }

    /// `file` composed with `defs` into a shader module of `device`, with wgpu's
    /// runtime checks or without them (`checks`).
    pub fn module(
        &mut self,
        device: &wgpu::Device,
        label: &str,
        file: WgslFile,
        shader_defs: &[ShaderDef],
        checks: ShaderChecks,
    ) -> wgpu::ShaderModule {
        match self.try_module(device, label, file, shader_defs, checks) {
            Ok(module) => module,
            Err(message) => panic!("bevy_splat's {} does not compose: {message}", file.path),
        }
    }

    /// [`Self::module`], with a composition error returned instead (an app's splat
    /// shader may not compose; the crate's own files always do).
    pub fn try_module(
        &mut self,
        device: &wgpu::Device,
        label: &str,
        file: WgslFile,
        shader_defs: &[ShaderDef],
        checks: ShaderChecks,
    ) -> Result<wgpu::ShaderModule, String> {
        let module = self.compose(file, shader_defs)?;
        let descriptor = wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(module)),
        };
        if checks == ShaderChecks::All {
            return Ok(device.create_shader_module(descriptor));
        }
        // SAFETY: the module's loops end and its indices are in range (`ShaderChecks::None`).
        Ok(unsafe {
            device.create_shader_module_trusted(descriptor, wgpu::ShaderRuntimeChecks::unchecked())
        })
    }
}

fn def_map(common: &[ShaderDef], own: &[ShaderDef]) -> HashMap<String, ShaderDefValue> {
    common
        .iter()
        .chain(own)
        .copied()
        .map(|def| match def {
            ShaderDef::Flag(name) => (name.to_string(), ShaderDefValue::Bool(true)),
            ShaderDef::UInt(name, value) => (name.to_string(), ShaderDefValue::UInt(value)),
        })
        .collect()
}
