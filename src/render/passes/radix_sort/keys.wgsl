// Radix sort: the bindings every kernel of a pass reads (the pass's parameters, the
// sort's state, the keys) and the digits of a key.
//
// Keys are vec2<u32> (x = low 32 bits, y = high 32 bits) under the shader def
// SORT_KEY_64, else u32; values are u32. The modules that hold keys declare the key
// type the same way: a composable module exports no alias (naga writes a module's
// interface back as WGSL, where an alias is gone).
#define_import_path bevy_splat::radix_sort::keys

#import bevy_splat::radix_sort::state::{PassParams, RADIX_BITS, SortState}

@group(0) @binding(0) var<uniform> params: PassParams;
@group(0) @binding(1) var<storage, read> state: SortState;

#ifdef SORT_KEY_64
@group(0) @binding(2) var<storage, read> keys_in: array<vec2<u32>>;
// The key's 32-bit words.
const KEY_WORDS: u32 = 2u;
fn key_word(key: vec2<u32>, word: u32) -> u32 {
    return select(key.x, key.y, word != 0u);
}
fn digit_at(key: vec2<u32>, word_index: u32, shift_in_word: u32, mask: u32) -> u32 {
    return digit_of_word(key_word(key, word_index), word_index, shift_in_word, mask);
}
fn digit_of(key: vec2<u32>) -> u32 {
    return digit_at(key, params.word, params.shift, params.mask);
}
#else
@group(0) @binding(2) var<storage, read> keys_in: array<u32>;
const KEY_WORDS: u32 = 1u;
fn key_word(key: u32, word: u32) -> u32 {
    return key;
}
fn digit_at(key: u32, word_index: u32, shift_in_word: u32, mask: u32) -> u32 {
    return digit_of_word(key, word_index, shift_in_word, mask);
}
fn digit_of(key: u32) -> u32 {
    return digit_at(key, params.word, params.shift, params.mask);
}
#endif

// The digit at bit `shift_in_word` of key word `word_index` (`word`), `mask` wide; a
// ranged sort's low word counts from the range's base and drops the bits below its
// shift.
fn digit_of_word(key_word: u32, word_index: u32, shift_in_word: u32, mask: u32) -> u32 {
    var word = key_word;
    var shift = shift_in_word;
    if word_index == 0u {
        word -= state.key_base;
        shift += state.key_shift;
    }
    return (word >> min(shift, 31u)) & mask;
}

// Which pass of the sort `params` describe: 0 for the lowest digit.
fn pass_index() -> u32 {
    return (params.word * 32u + params.shift) / RADIX_BITS;
}
