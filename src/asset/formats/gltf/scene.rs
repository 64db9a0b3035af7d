//! The node hierarchy of the scene to show: which roots, which nodes below them, each
//! node's local transform. glTF requires the hierarchy to be disjoint strict trees
//! (2.0 spec §3.5.3), so a cycle or a shared child is an error, found before any walk.

use super::document::Root;
use super::error::{GltfError, Kind, get};
use super::notes::Note;
use super::transform::{self, MatrixFit, Trs};

/// The glTF nodes of the chosen scene, in depth-first order from its roots.
pub(crate) struct Walk {
    /// glTF node indices, parents before children.
    pub order: Vec<usize>,
    /// Positions in `order` of the scene's roots.
    pub roots: Vec<usize>,
}

/// Checks the node graph and lists the nodes of the default scene: `scene`, else
/// scene 0, else (no scenes) every node without a parent.
pub(crate) fn walk(root: &Root) -> Result<Walk, GltfError> {
    let parents = parents(root)?;
    let roots: Vec<usize> = match root.scene.or((!root.scenes.is_empty()).then_some(0)) {
        Some(index) => {
            let scene = get(&root.scenes, Kind::Scene, index, || {
                "the document's `scene`".into()
            })?;
            for &node in &scene.nodes {
                get(&root.nodes, Kind::Node, node, || format!("scene {index}"))?;
                if let Some(parent) = parents[node] {
                    return Err(GltfError::SceneRootIsChild { node, parent });
                }
            }
            dedup(&scene.nodes)
        }
        None => (0..root.nodes.len())
            .filter(|&n| parents[n].is_none())
            .collect(),
    };

    let mut order = Vec::new();
    let mut positions = Vec::with_capacity(roots.len());
    for &r in &roots {
        positions.push(order.len());
        let mut stack = vec![r];
        while let Some(node) = stack.pop() {
            order.push(node);
            // Reversed so the first child comes out first.
            stack.extend(root.nodes[node].children.iter().rev());
        }
    }
    Ok(Walk {
        order,
        roots: positions,
    })
}

fn dedup(nodes: &[usize]) -> Vec<usize> {
    let mut seen = std::collections::BTreeSet::new();
    nodes.iter().copied().filter(|n| seen.insert(*n)).collect()
}

/// Each node's parent, refusing out-of-range children, shared children and cycles.
fn parents(root: &Root) -> Result<Vec<Option<usize>>, GltfError> {
    let count = root.nodes.len();
    let mut parents: Vec<Option<usize>> = vec![None; count];
    for (index, node) in root.nodes.iter().enumerate() {
        for &child in &node.children {
            get(&root.nodes, Kind::Node, child, || {
                format!("node {index}'s children")
            })?;
            if child == index {
                return Err(GltfError::NodeCycle { node: index });
            }
            if let Some(first) = parents[child] {
                return Err(GltfError::NodeWithTwoParents {
                    node: child,
                    first,
                    second: index,
                });
            }
            parents[child] = Some(index);
        }
    }
    // With one parent each, a cycle is a parent chain that comes back to itself. Each
    // chain is walked once: nodes already known to reach a root end the walk.
    let mut reaches_root = vec![false; count];
    let mut on_path = vec![false; count];
    for start in 0..count {
        let mut path = Vec::new();
        let mut node = start;
        loop {
            if reaches_root[node] {
                break;
            }
            if on_path[node] {
                return Err(GltfError::NodeCycle { node });
            }
            on_path[node] = true;
            path.push(node);
            match parents[node] {
                Some(parent) => node = parent,
                None => break,
            }
        }
        for n in path {
            reaches_root[n] = true;
        }
    }
    Ok(parents)
}

/// Node `index`'s local transform, from its matrix or its TRS properties.
pub(crate) fn local_transform(
    root: &Root,
    index: usize,
    notes: &mut Vec<Note>,
) -> Result<Trs, GltfError> {
    let node = &root.nodes[index];
    let trs = match &node.matrix {
        Some(matrix) => {
            if matrix.iter().any(|v| !v.is_finite()) {
                return Err(GltfError::NonFiniteTransform { node: index });
            }
            let (trs, fit) = transform::decompose(matrix);
            if fit != MatrixFit::Exact {
                notes.push(Note::Matrix { node: index, fit });
            }
            trs
        }
        None => Trs {
            translation: node.translation.unwrap_or([0.0; 3]),
            rotation: node.rotation.unwrap_or([0.0, 0.0, 0.0, 1.0]),
            scale: node.scale.unwrap_or([1.0; 3]),
        },
    };
    let finite = trs
        .translation
        .iter()
        .chain(&trs.rotation)
        .chain(&trs.scale)
        .all(|v| v.is_finite());
    if !finite {
        return Err(GltfError::NonFiniteTransform { node: index });
    }
    Ok(trs)
}
