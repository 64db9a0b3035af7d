// Radix sort: the bindings every kernel of a pass reads (the pass's parameters, the
// sort's state, the keys) and the digits of a key.
//
// Keys are `SortKey`: vec2<u32> (x = low 32 bits, y = high 32 bits) under the shader
// def SORT_KEY_64, else u32; values are u32. (naga_oil does not export an alias:
// the modules that name the key type declare it the same way.)
#define_import_path bevy_splat::radix_sort::keys

#import bevy_splat::radix_sort::state::{PassParams, RADIX_BITS, SortState}

#ifdef SORT_KEY_64
alias SortKey = vec2<u32>;
// The key's 32-bit words.
const KEY_WORDS: u32 = 2u;
fn key_word(key: SortKey, word: u32) -> u32 {
    return select(key.x, key.y, word != 0u);
}
#else
alias SortKey = u32;
const KEY_WORDS: u32 = 1u;
fn key_word(key: SortKey, word: u32) -> u32 {
    return key;
}
#endif

@group(0) @binding(0) var<uniform> params: PassParams;
@group(0) @binding(1) var<storage, read> state: SortState;
@group(0) @binding(2) var<storage, read> keys_in: array<SortKey>;

fn linear_group(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.y * nwg.x + wid.x;
}

// The digit at bit `shift_in_word` of key word `word_index`, `mask` wide; a ranged
// sort's low word counts from the range's base and drops the bits below its shift.
fn digit_at(key: SortKey, word_index: u32, shift_in_word: u32, mask: u32) -> u32 {
    var word = key_word(key, word_index);
    var shift = shift_in_word;
    if word_index == 0u {
        word -= state.key_base;
        shift += state.key_shift;
    }
    return (word >> min(shift, 31u)) & mask;
}

fn digit_of(key: SortKey) -> u32 {
    return digit_at(key, params.word, params.shift, params.mask);
}

// Which pass of the sort `params` describe: 0 for the lowest digit.
fn pass_index() -> u32 {
    return (params.word * 32u + params.shift) / RADIX_BITS;
}
