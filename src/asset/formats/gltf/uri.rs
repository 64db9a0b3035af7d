//! Buffer URIs: embedded `data:` URIs and percent-encoded relative paths (glTF 2.0
//! spec §3.6.1.1: URIs are RFC 3986 references, data URIs use base64).

use base64::Engine as _;

/// What a buffer's `uri` stands for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum BufferUri {
    /// Embedded bytes.
    Data(Vec<u8>),
    /// A path relative to the glTF file, percent-decoded.
    External(String),
}

/// Classifies and decodes `uri`; `Err` carries the reason for the message.
pub(crate) fn resolve(uri: &str) -> Result<BufferUri, UriProblem> {
    match uri.strip_prefix("data:") {
        Some(rest) => decode_data(rest).map(BufferUri::Data),
        None => percent_decode(uri).map(BufferUri::External),
    }
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum UriProblem {
    Data(String),
    Path,
}

fn decode_data(rest: &str) -> Result<Vec<u8>, UriProblem> {
    let (header, payload) = rest
        .split_once(',')
        .ok_or_else(|| UriProblem::Data("no ',' before the data".into()))?;
    // glTF requires base64 for embedded buffers; a media type is not checked because
    // writers use both application/octet-stream and application/gltf-buffer.
    if header.rsplit(';').next() != Some("base64") {
        return Err(UriProblem::Data(format!(
            "\"{header}\" is not base64-encoded (glTF requires ;base64)"
        )));
    }
    // Some writers wrap long lines or leave a trailing newline.
    let cleaned: Vec<u8> = payload
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(&cleaned)
        .map_err(|e| UriProblem::Data(e.to_string()))
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Percent-decodes a relative path. A '%' not followed by two hex digits is kept as
/// is, since hand-written files contain bare '%' more often than broken escapes.
pub(crate) fn percent_decode(uri: &str) -> Result<String, UriProblem> {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| Some(hex(*bytes.get(i + 1)?)? << 4 | hex(*bytes.get(i + 2)?)?))
            .flatten();
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| UriProblem::Path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_uri_decodes_base64() {
        assert_eq!(
            resolve("data:application/octet-stream;base64,AAEC"),
            Ok(BufferUri::Data(vec![0, 1, 2]))
        );
        assert_eq!(
            resolve("data:application/gltf-buffer;base64,AA\nEC\n"),
            Ok(BufferUri::Data(vec![0, 1, 2]))
        );
    }

    #[test]
    fn data_uri_without_base64_is_refused() {
        assert!(matches!(
            resolve("data:text/plain,hello"),
            Err(UriProblem::Data(_))
        ));
        assert!(matches!(
            resolve("data:;base64,@@@@"),
            Err(UriProblem::Data(_))
        ));
    }

    #[test]
    fn paths_are_percent_decoded() {
        assert_eq!(
            resolve("my%20splats/data%2B1.bin"),
            Ok(BufferUri::External("my splats/data+1.bin".into()))
        );
        assert_eq!(percent_decode("100%.bin"), Ok("100%.bin".into()));
        assert_eq!(percent_decode("%C3%A9.bin"), Ok("é.bin".into()));
        assert_eq!(percent_decode("%FF.bin"), Err(UriProblem::Path));
    }
}
