//! A binary little-endian PLY reader for the float-only vertex files the fixtures use.

use std::collections::HashMap;

pub struct Ply {
    pub count: usize,
    names: HashMap<String, usize>,
    width: usize,
    rest_per_channel: usize,
    values: Vec<f32>,
}

impl Ply {
    pub fn parse(bytes: &[u8]) -> Ply {
        let end = bytes
            .windows(11)
            .position(|w| w == b"end_header\n")
            .expect("PLY header")
            + 11;
        let header = std::str::from_utf8(&bytes[..end]).expect("ASCII header");
        let mut count = 0;
        let mut names = HashMap::new();
        let mut width = 0;
        for line in header.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["format", f, _] => assert_eq!(*f, "binary_little_endian"),
                ["element", "vertex", n] => count = n.parse().unwrap(),
                ["element", other, _] => panic!("unexpected element {other}"),
                ["property", "float", name] => {
                    names.insert(name.to_string(), width);
                    width += 1;
                }
                ["property", ..] => panic!("non-float property: {line}"),
                _ => {}
            }
        }
        let body = &bytes[end..end + count * width * 4];
        let values = body
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let rest_per_channel = (0..)
            .take_while(|i| names.contains_key(&format!("f_rest_{i}")))
            .count()
            / 3;
        Ply {
            count,
            names,
            width,
            rest_per_channel,
            values,
        }
    }

    pub fn has(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }

    pub fn get(&self, splat: usize, name: &str) -> f32 {
        let column = self.names[name];
        self.values[splat * self.width + column]
    }

    /// Rest coefficients per channel (f_rest count / 3).
    pub fn rest_per_channel(&self) -> usize {
        self.rest_per_channel
    }

    pub fn position(&self, i: usize) -> [f32; 3] {
        [self.get(i, "x"), self.get(i, "y"), self.get(i, "z")]
    }

    pub fn log_scale(&self, i: usize) -> [f32; 3] {
        [
            self.get(i, "scale_0"),
            self.get(i, "scale_1"),
            self.get(i, "scale_2"),
        ]
    }

    /// w, x, y, z as stored (rot_0 is w).
    pub fn rotation(&self, i: usize) -> [f32; 4] {
        [
            self.get(i, "rot_0"),
            self.get(i, "rot_1"),
            self.get(i, "rot_2"),
            self.get(i, "rot_3"),
        ]
    }

    pub fn dc(&self, i: usize) -> [f32; 3] {
        [
            self.get(i, "f_dc_0"),
            self.get(i, "f_dc_1"),
            self.get(i, "f_dc_2"),
        ]
    }

    /// Rest coefficient `k` (0-based, excluding DC) of `channel`, Inria's channel-major
    /// f_rest layout.
    pub fn rest(&self, i: usize, channel: usize, k: usize) -> f32 {
        self.get(
            i,
            &format!("f_rest_{}", channel * self.rest_per_channel + k),
        )
    }
}
