// The splat shader hook's default: the splat unchanged. An app's `SplatShader` takes
// this module's place (`bevy_splat::preprocess::user_shader`) in its own variant of
// the preprocess, which imports the hook only under the shader def SPLAT_SHADER; here
// it answers that import wherever the preprocess is composed without one.
#define_import_path bevy_splat::preprocess::user_shader

#import bevy_splat::preprocess::hook::{Splat, SplatContext}

fn modify_splat(splat: Splat, context: SplatContext) -> Splat {
    return splat;
}
