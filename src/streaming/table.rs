//! The page table of one streamed cloud: which chunks of its tree are resident, how
//! their nodes hang together across chunks, the records the GPU's cut reads for each
//! resident node, and which chunk to fetch or evict next.
//!
//! The cut stays valid whatever is resident. A node whose children are not all
//! resident is drawn as a leaf (its record's radius −1): the ancestor stands in for
//! the missing detail, and its resident children are hidden (radius −2), as is a node
//! whose parent is not resident (its chunk arrived before the chunk that holds its
//! parent, which a file's chunk layout allows). Each node's sphere lies inside its parent's,
//! shrunk where its own shape would reach outside, so sizes never grow from parent to
//! child (`lod/cut.rs`), whichever chunks the spheres were settled in.
//!
//! A chunk is fetched once a resident chunk holds parents of its nodes; its priority
//! is the largest size on screen those parents can have, and nothing is fetched for
//! parents under a pixel. A chunk is evicted only when no resident or loading chunk
//! holds its nodes' children, least recently wanted first.

use bevy::math::Vec3;

use crate::lod::ROOT_RADIUS;

/// The record radius of a node drawn as a leaf: its children are not all resident.
pub const LEAF_RADIUS: f32 = -1.0;
/// The record radius of a hidden node: its parent is not resident.
pub const HIDDEN_RADIUS: f32 = -2.0;

/// A node's sphere covers its Gaussian to this many standard deviations.
const SIGMAS: f32 = 3.0;
/// A child's sphere keeps this fraction of its parent's free room, so that the GPU's
/// rounding cannot make it the larger.
const INSIDE: f32 = 1.0 - 1.0 / 4096.0;
/// A chunk evicts another only when it is wanted this much more.
const EVICT_RATIO: f32 = 2.0;

/// Nodes of a link measured together for its priority.
const BOUND_RUN: usize = 32;

/// No parent known.
const NO_PARENT: u32 = u32::MAX;

/// A camera the priorities are measured from, in the cloud's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamCamera {
    /// Where it stands.
    pub position: Vec3,
    /// Pixels per unit of size (`r / d`): the focal length in pixels divided by the
    /// cloud's scale in the world.
    pub pixels_per_size: f32,
}

/// What a fetched chunk brings: its nodes' shapes and their children.
pub struct ChunkNodes {
    /// The file's index of the chunk's first node.
    pub base: u32,
    /// Per node, centre and the largest of its three scales.
    pub shapes: Vec<([f32; 3], f32)>,
    /// Per node, `[first child, count]` in the file's numbering.
    pub children: Vec<[u32; 2]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residency {
    Absent,
    Loading,
    Resident,
    /// Its fetch or decode failed: it is not asked for again.
    Failed,
}

/// The children one chunk's nodes have in another chunk.
struct Link {
    target: usize,
    /// The chunk's nodes (local indices) with children in `target`.
    nodes: Vec<u32>,
}

struct Resident {
    base: u32,
    children: Vec<[u32; 2]>,
    /// Each node's own sphere, from its shape.
    own: Vec<[f32; 4]>,
    /// Each node's sphere inside its parent's (its own where the parent is unknown).
    spheres: Vec<[f32; 4]>,
    /// Each node's parent (file numbering), `NO_PARENT` where not resident.
    parents: Vec<u32>,
    links: Vec<Link>,
    /// Per link, spheres around runs of [`BOUND_RUN`] of its nodes' spheres (nodes
    /// stored near each other lie near each other) with their largest radius.
    link_bounds: Vec<Vec<([f32; 4], f32)>>,
    /// Per node, how the cut sees it (`HIDDEN`, `DRAWN_AS_LEAF` or `SPLIT`).
    states: Vec<u8>,
    /// Per node, the frame it was last split in (its children all resident).
    split_at: Vec<u64>,
    /// Per node, its fade: its children's share and its own weight (`[1, 1]` once
    /// settled).
    fades: Vec<[f32; 2]>,
}

/// A node not drawn: its parent is not resident, or not split.
const HIDDEN: u8 = 0;
/// A node drawn in place of children that are not all resident.
const DRAWN_AS_LEAF: u8 = 1;
/// A node drawn or split as the cut's threshold decides: its children are resident.
const SPLIT: u8 = 2;

struct Slot {
    residency: Residency,
    resident: Option<Resident>,
    /// The frame it was last wanted in (priority at or above a pixel).
    last_wanted: u64,
    /// This frame's priority in pixels.
    priority: f32,
    /// Bumped whenever its records change.
    records_version: u64,
}

/// What to do this frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamPlan {
    /// Chunks to fetch, most wanted first (now `Loading`).
    pub fetch: Vec<usize>,
    /// Chunks evicted to make room (now `Absent`).
    pub evicted: Vec<usize>,
}

/// The page table of one streamed cloud.
pub struct StreamTable {
    chunk_size: u32,
    nodes: u32,
    slots: Vec<Slot>,
    frame: u64,
    next_version: u64,
    /// Frames a newly split node's children take to fade in (0: at once).
    fade_frames: u64,
    /// Nodes split within the last `fade_frames` frames.
    fading: Vec<u32>,
    /// Nodes whose fade is not `[1, 1]`: reset before the next frame's fades.
    faded: Vec<u32>,
}

impl StreamTable {
    /// A table for a file of `nodes` nodes in chunks of `chunk_size`, none resident.
    pub fn new(nodes: u32, chunk_size: u32) -> Self {
        let chunk_size = chunk_size.max(1);
        let chunks = nodes.div_ceil(chunk_size) as usize;
        Self {
            chunk_size,
            nodes,
            slots: (0..chunks)
                .map(|_| Slot {
                    residency: Residency::Absent,
                    resident: None,
                    last_wanted: 0,
                    priority: 0.0,
                    records_version: 0,
                })
                .collect(),
            frame: 0,
            next_version: 1,
            fade_frames: 0,
            fading: Vec::new(),
            faded: Vec::new(),
        }
    }

    pub fn chunks(&self) -> usize {
        self.slots.len()
    }

    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    pub fn residency(&self, chunk: usize) -> Option<Residency> {
        self.slots.get(chunk).map(|slot| slot.residency)
    }

    /// Nodes chunk `chunk` holds.
    pub fn chunk_len(&self, chunk: usize) -> u32 {
        let start = (chunk as u64 * u64::from(self.chunk_size)).min(u64::from(self.nodes));
        let end = (start + u64::from(self.chunk_size)).min(u64::from(self.nodes));
        (end - start) as u32
    }

    fn chunk_of(&self, node: u32) -> usize {
        (node / self.chunk_size) as usize
    }

    /// Bumped whenever `chunk`'s records change (0 while it is not resident).
    pub fn records_version(&self, chunk: usize) -> u64 {
        self.slots.get(chunk).map_or(0, |slot| slot.records_version)
    }

    /// Marks `chunk` as being fetched.
    pub fn set_loading(&mut self, chunk: usize) {
        if let Some(slot) = self.slots.get_mut(chunk) {
            slot.residency = Residency::Loading;
        }
    }

    /// Marks `chunk` as failed: never asked for again.
    pub fn set_failed(&mut self, chunk: usize) {
        if let Some(slot) = self.slots.get_mut(chunk) {
            slot.residency = Residency::Failed;
            slot.resident = None;
        }
    }

    /// `chunk` arrived: its nodes join the tree, and every chunk whose records change
    /// (its own, those holding its parents, those holding its children) gets a new
    /// version. Nodes must be the chunk's (`base`, count); returns `false` (and marks
    /// it failed) otherwise.
    pub fn insert(&mut self, chunk: usize, nodes: ChunkNodes) -> bool {
        let expected = self.chunk_len(chunk) as usize;
        let base = chunk as u64 * u64::from(self.chunk_size);
        if chunk >= self.slots.len()
            || u64::from(nodes.base) != base
            || nodes.shapes.len() != expected
            || nodes.children.len() != expected
        {
            self.set_failed(chunk);
            return false;
        }
        let own: Vec<[f32; 4]> = nodes
            .shapes
            .iter()
            .map(|&(centre, scale)| own_sphere(centre, scale))
            .collect();
        let mut links: Vec<Link> = Vec::new();
        for (local, &[start, count]) in nodes.children.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let last = start
                .saturating_add(count - 1)
                .min(self.nodes.saturating_sub(1));
            for target in self.chunk_of(start)..=self.chunk_of(last) {
                match links.iter_mut().find(|link| link.target == target) {
                    Some(link) => link.nodes.push(local as u32),
                    None => links.push(Link {
                        target,
                        nodes: vec![local as u32],
                    }),
                }
            }
        }
        let len = own.len();
        self.slots[chunk].resident = Some(Resident {
            base: nodes.base,
            children: nodes.children,
            spheres: own.clone(),
            own,
            parents: vec![NO_PARENT; len],
            links,
            link_bounds: Vec::new(),
            states: vec![HIDDEN; len],
            split_at: vec![0; len],
            fades: vec![[1.0, 1.0]; len],
        });
        self.slots[chunk].residency = Residency::Resident;
        // Its nodes' parents, from the resident chunks that link here; and its
        // nodes as parents of resident chunks' nodes.
        let sources: Vec<usize> = (0..self.slots.len())
            .filter(|&c| c != chunk && self.links_to(c, chunk))
            .collect();
        for &source in &sources {
            self.connect(source, chunk);
        }
        let targets: Vec<usize> = self.resident_targets(chunk);
        for &target in &targets {
            self.connect(chunk, target);
        }
        // Spheres settle from the parents down.
        self.settle_from(chunk);
        self.refresh();
        true
    }

    /// Evicts `chunk` if nothing resident or loading hangs below it; returns whether
    /// it did.
    pub fn evict(&mut self, chunk: usize) -> bool {
        if chunk == 0 || !self.evictable(chunk) {
            return false;
        }
        let slot = &mut self.slots[chunk];
        slot.residency = Residency::Absent;
        slot.resident = None;
        slot.records_version = 0;
        self.refresh();
        true
    }

    /// Whether `chunk` is resident and no resident or loading chunk holds children of
    /// its nodes.
    fn evictable(&self, chunk: usize) -> bool {
        let Some(resident) = self.slots.get(chunk).and_then(|s| s.resident.as_ref()) else {
            return false;
        };
        resident.links.iter().all(|link| {
            link.target == chunk
                || matches!(
                    self.residency(link.target),
                    Some(Residency::Absent | Residency::Failed) | None
                )
        })
    }

    fn links_to(&self, source: usize, target: usize) -> bool {
        self.slots[source]
            .resident
            .as_ref()
            .is_some_and(|r| r.links.iter().any(|link| link.target == target))
    }

    fn resident_targets(&self, chunk: usize) -> Vec<usize> {
        let Some(resident) = &self.slots[chunk].resident else {
            return Vec::new();
        };
        resident
            .links
            .iter()
            .map(|link| link.target)
            .filter(|&t| t != chunk && self.residency(t) == Some(Residency::Resident))
            .collect()
    }

    /// Sets the parents of `target`'s nodes that `source`'s nodes are parents of.
    fn connect(&mut self, source: usize, target: usize) {
        let pairs: Vec<(u32, u32)> = {
            let Some(src) = &self.slots[source].resident else {
                return;
            };
            src.links
                .iter()
                .filter(|link| link.target == target)
                .flat_map(|link| link.nodes.iter())
                .flat_map(|&local| {
                    let [start, count] = src.children[local as usize];
                    (start..start.saturating_add(count)).map(move |child| (child, src.base + local))
                })
                .collect()
        };
        let Some(dst) = self.slots[target].resident.as_mut() else {
            return;
        };
        for (child, parent) in pairs {
            if let Some(slot) = child
                .checked_sub(dst.base)
                .and_then(|i| dst.parents.get_mut(i as usize))
                && *slot == NO_PARENT
            {
                *slot = parent;
            }
        }
    }

    /// Node `node`'s settled sphere, if its chunk is resident.
    fn sphere(&self, node: u32) -> Option<[f32; 4]> {
        let resident = self.slots.get(self.chunk_of(node))?.resident.as_ref()?;
        resident
            .spheres
            .get((node - resident.base) as usize)
            .copied()
    }

    /// Settles the spheres of `chunk` inside its nodes' parents', then of every
    /// resident chunk below it, and refreshes their link bounds.
    fn settle_from(&mut self, chunk: usize) {
        let mut queue = vec![chunk];
        let mut seen = vec![false; self.slots.len()];
        while let Some(chunk) = queue.pop() {
            if std::mem::replace(&mut seen[chunk], true) {
                continue;
            }
            self.settle(chunk);
            queue.extend(self.resident_targets(chunk));
            self.touch(chunk);
        }
    }

    fn settle(&mut self, chunk: usize) {
        let Some(resident) = self.slots[chunk].resident.take() else {
            return;
        };
        let mut resident = resident;
        for i in 0..resident.own.len() {
            let parent = resident.parents[i];
            let parent_sphere = if parent == NO_PARENT {
                None
            } else if parent >= resident.base {
                // A parent in the same chunk comes before its child: already settled.
                resident
                    .spheres
                    .get((parent - resident.base) as usize)
                    .copied()
            } else {
                self.sphere(parent)
            };
            resident.spheres[i] = match parent_sphere {
                Some(parent) => inside(resident.own[i], parent),
                None => resident.own[i],
            };
        }
        // Parents within the chunk: node order is parents first.
        let base = resident.base;
        let len = resident.children.len() as u32;
        for local in 0..len {
            let [start, count] = resident.children[local as usize];
            for child in start..start.saturating_add(count) {
                if let Some(i) = child.checked_sub(base).filter(|&i| i < len) {
                    if resident.parents[i as usize] == NO_PARENT {
                        resident.parents[i as usize] = base + local;
                    }
                    let parent = resident.spheres[local as usize];
                    resident.spheres[i as usize] = inside(resident.own[i as usize], parent);
                }
            }
        }
        resident.link_bounds = resident
            .links
            .iter()
            .map(|link| {
                link.nodes
                    .chunks(BOUND_RUN)
                    .map(|run| bound(run.iter().map(|&local| resident.spheres[local as usize])))
                    .collect()
            })
            .collect();
        self.slots[chunk].resident = Some(resident);
    }

    /// Recomputes how the cut sees every resident node, from the root down: a node
    /// takes part where its parent is split (the root always), and is split where all
    /// of its children are resident. Chunks whose nodes changed get new versions.
    fn refresh(&mut self) {
        for chunk in 0..self.slots.len() {
            let Some(mut resident) = self.slots[chunk].resident.take() else {
                continue;
            };
            let mut changed = false;
            for i in 0..resident.states.len() {
                let node = resident.base + i as u32;
                let parent = resident.parents[i];
                let takes_part = node == 0
                    || (parent != NO_PARENT
                        && if parent >= resident.base {
                            resident.states.get((parent - resident.base) as usize)
                        } else {
                            self.node_state(parent)
                        }
                        .is_some_and(|&state| state == SPLIT));
                let state = match takes_part {
                    false => HIDDEN,
                    true if self.children_resident(resident.children[i], chunk) => SPLIT,
                    true => DRAWN_AS_LEAF,
                };
                let before = std::mem::replace(&mut resident.states[i], state);
                // A node that splits while an ancestor's fade is under way splits at
                // once, its children taking its weight: fades that nested would
                // multiply, and the finest detail would come in only at the end.
                // Only a node that was drawn fades as it splits: one that arrives split
                // (its children in its own chunk) was never drawn.
                let under_a_fade = resident.fades[i][1] < 1.0;
                if state == SPLIT
                    && before == DRAWN_AS_LEAF
                    && self.fade_frames > 0
                    && !under_a_fade
                {
                    resident.split_at[i] = self.frame;
                    self.fading.push(node);
                }
                changed |= before != state;
            }
            self.slots[chunk].resident = Some(resident);
            if changed {
                self.touch(chunk);
            }
        }
    }

    fn node_state(&self, node: u32) -> Option<&u8> {
        let resident = self.slots.get(self.chunk_of(node))?.resident.as_ref()?;
        resident.states.get((node - resident.base) as usize)
    }

    fn touch(&mut self, chunk: usize) {
        if self.slots[chunk].residency == Residency::Resident {
            self.slots[chunk].records_version = self.next_version;
            self.next_version += 1;
        }
    }

    /// Sets how many frames a newly split node's children take to fade in.
    pub fn set_fade_frames(&mut self, frames: u32) {
        self.fade_frames = u64::from(frames);
    }

    /// Moves every fade on by a frame: a node split `k` frames ago lets its children
    /// take `1 − (1 − k / fade_frames)³` of its share, and every node below it is weighted so,
    /// so that along any path the weights still sum to one while the new detail comes
    /// in (a node splitting under a fade does not fade itself). Chunks whose fades
    /// changed get new versions.
    pub fn advance_fades(&mut self) {
        let mut touched = std::collections::BTreeSet::new();
        for node in std::mem::take(&mut self.faded) {
            if let Some(fade) = self.fade_mut(node) {
                *fade = [1.0, 1.0];
                touched.insert(self.chunk_of(node));
            }
        }
        let (frame, frames) = (self.frame, self.fade_frames.max(1));
        let mut fading = std::mem::take(&mut self.fading);
        fading.retain(|&node| {
            self.node_split_at(node)
                .is_some_and(|at| frame < at + frames && self.node_state(node) == Some(&SPLIT))
        });
        // Ancestors first: a nested fade multiplies what its ancestor set.
        fading.sort_unstable();
        fading.dedup();
        for &node in &fading {
            let Some(at) = self.node_split_at(node) else {
                continue;
            };
            // Eased so that most of the change comes early: a weight acts on the
            // transmittance (`T^w`), and an opaque parent's weight would otherwise
            // only show its going in the fade's last frames.
            let t = (frame.saturating_sub(at) as f32 / frames as f32).min(1.0);
            let share = 1.0 - (1.0 - t).powi(3);
            if let Some(fade) = self.fade_mut(node) {
                fade[0] *= share;
            }
            self.faded.push(node);
            touched.insert(self.chunk_of(node));
            // Every resident node below it.
            let mut stack: Vec<u32> = self.node_children_of(node);
            while let Some(below) = stack.pop() {
                let Some(fade) = self.fade_mut(below) else {
                    continue;
                };
                fade[1] *= share;
                self.faded.push(below);
                touched.insert(self.chunk_of(below));
                stack.extend(self.node_children_of(below));
            }
        }
        self.fading = fading;
        for chunk in touched {
            self.touch(chunk);
        }
    }

    fn fade_mut(&mut self, node: u32) -> Option<&mut [f32; 2]> {
        let chunk = self.chunk_of(node);
        let resident = self.slots.get_mut(chunk)?.resident.as_mut()?;
        resident.fades.get_mut((node - resident.base) as usize)
    }

    fn node_split_at(&self, node: u32) -> Option<u64> {
        let resident = self.slots.get(self.chunk_of(node))?.resident.as_ref()?;
        resident
            .split_at
            .get((node - resident.base) as usize)
            .copied()
    }

    /// Node `node`'s children, where its chunk is resident (empty otherwise).
    fn node_children_of(&self, node: u32) -> Vec<u32> {
        let Some(resident) = self
            .slots
            .get(self.chunk_of(node))
            .and_then(|slot| slot.resident.as_ref())
        else {
            return Vec::new();
        };
        match resident.children.get((node - resident.base) as usize) {
            Some(&[start, count]) => (start..start.saturating_add(count)).collect(),
            None => Vec::new(),
        }
    }

    /// Chunk `chunk`'s GPU records: per node its sphere (radius [`LEAF_RADIUS`] where
    /// its children are not all resident, [`HIDDEN_RADIUS`] where its parent is not),
    /// its parent's sphere ([`ROOT_RADIUS`] for the root), and its fade (its
    /// children's share, its own weight, 0, 0).
    pub fn records(&self, chunk: usize) -> Option<Vec<[f32; 4]>> {
        let resident = self.slots.get(chunk)?.resident.as_ref()?;
        let mut records = Vec::with_capacity(resident.spheres.len() * 3);
        for (i, &sphere) in resident.spheres.iter().enumerate() {
            let node = resident.base + i as u32;
            let [x, y, z, _] = sphere;
            let parent = resident.parents[i];
            let parent_sphere = match parent {
                _ if node == 0 => Some([0.0, 0.0, 0.0, ROOT_RADIUS]),
                NO_PARENT => None,
                parent => self.sphere(parent),
            };
            // A node is drawn only where its parent is split: all of the parent's
            // children resident (the parent stands in for them otherwise).
            let own = match resident.states[i] {
                SPLIT if parent_sphere.is_some() => sphere,
                DRAWN_AS_LEAF if parent_sphere.is_some() => [x, y, z, LEAF_RADIUS],
                _ => [x, y, z, HIDDEN_RADIUS],
            };
            records.push(own);
            records.push(parent_sphere.unwrap_or([0.0, 0.0, 0.0, ROOT_RADIUS]));
            let [share, weight] = resident.fades[i];
            records.push([share, weight, 0.0, 0.0]);
        }
        Some(records)
    }

    /// Whether the nodes `start..start + count` (at least one) are all resident;
    /// `own` is resident whatever its slot says.
    fn children_resident(&self, [start, count]: [u32; 2], own: usize) -> bool {
        if count == 0 {
            return false;
        }
        let last = start.saturating_add(count - 1);
        (self.chunk_of(start)..=self.chunk_of(last))
            .all(|c| c == own || self.residency(c) == Some(Residency::Resident))
    }

    /// Resident chunks, in order.
    pub fn resident(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.slots.len()).filter(|&c| self.slots[c].residency == Residency::Resident)
    }

    /// Nodes in resident chunks.
    pub fn resident_nodes(&self) -> u64 {
        self.resident().map(|c| u64::from(self.chunk_len(c))).sum()
    }

    /// Chunks being fetched.
    pub fn loading(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| slot.residency == Residency::Loading)
            .count()
    }

    /// Chunks that failed.
    pub fn failed(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| slot.residency == Residency::Failed)
            .count()
    }

    /// Measures every chunk's priority from `cameras` and picks what to fetch and
    /// what to evict: at most `fetch_slots` fetches, and resident plus loading bytes
    /// (`chunk_bytes` each) within `budget_bytes`. Chunk 0 is always wanted.
    pub fn plan(
        &mut self,
        cameras: &[StreamCamera],
        fetch_slots: usize,
        budget_bytes: u64,
        chunk_bytes: impl Fn(usize) -> u64,
    ) -> StreamPlan {
        self.frame += 1;
        let frame = self.frame;
        // Priorities, parents' chunks first: a chunk is wanted as much as the largest
        // parent of its nodes, and never more than the chunk holding that parent.
        for slot in &mut self.slots {
            slot.priority = 0.0;
        }
        if let Some(first) = self.slots.first_mut() {
            first.priority = f32::INFINITY;
        }
        for chunk in 0..self.slots.len() {
            let Some(resident) = &self.slots[chunk].resident else {
                continue;
            };
            let own = self.slots[chunk].priority;
            let wanted: Vec<(usize, f32)> = resident
                .links
                .iter()
                .zip(&resident.link_bounds)
                .filter(|(link, _)| link.target > chunk)
                .map(|(link, bounds)| {
                    // Each run by its bound, or node by node where a camera is
                    // inside the bound (which says nothing there).
                    let run_size = |(run, &(sphere, largest)): (&[u32], &([f32; 4], f32))| {
                        cameras
                            .iter()
                            .map(|camera| match largest_size(sphere, largest, camera) {
                                size if size.is_finite() => size,
                                _ => run
                                    .iter()
                                    .map(|&local| {
                                        let own = resident.spheres[local as usize];
                                        largest_size(own, own[3], camera)
                                    })
                                    .fold(0.0, f32::max),
                            })
                            .fold(0.0, f32::max)
                    };
                    let size = link
                        .nodes
                        .chunks(BOUND_RUN)
                        .zip(bounds)
                        .map(run_size)
                        .fold(0.0, f32::max);
                    (link.target, size.min(own))
                })
                .collect();
            for (target, size) in wanted {
                let slot = &mut self.slots[target];
                slot.priority = slot.priority.max(size);
            }
        }
        for slot in &mut self.slots {
            if slot.priority >= 1.0 {
                slot.last_wanted = frame;
            }
        }

        let mut plan = StreamPlan::default();
        let mut candidates: Vec<usize> = (0..self.slots.len())
            .filter(|&c| {
                self.slots[c].residency == Residency::Absent
                    && (self.slots[c].priority >= 1.0 || c == 0)
            })
            .collect();
        candidates.sort_by(|&a, &b| {
            self.slots[b]
                .priority
                .total_cmp(&self.slots[a].priority)
                .then(a.cmp(&b))
        });
        let mut used: u64 = (0..self.slots.len())
            .filter(|&c| {
                matches!(
                    self.slots[c].residency,
                    Residency::Resident | Residency::Loading
                )
            })
            .map(&chunk_bytes)
            .sum();
        let mut slots = fetch_slots.saturating_sub(self.loading());
        for chunk in candidates {
            if slots == 0 {
                break;
            }
            let need = chunk_bytes(chunk);
            let priority = self.slots[chunk].priority;
            while used + need > budget_bytes && chunk != 0 {
                let victim = (1..self.slots.len())
                    .filter(|&c| self.evictable(c))
                    .filter(|&c| {
                        self.slots[c].last_wanted < frame
                            || self.slots[c].priority * EVICT_RATIO < priority
                    })
                    .min_by(|&a, &b| {
                        let (sa, sb) = (&self.slots[a], &self.slots[b]);
                        sa.last_wanted
                            .cmp(&sb.last_wanted)
                            .then(sa.priority.total_cmp(&sb.priority))
                            .then(b.cmp(&a))
                    });
                let Some(victim) = victim else {
                    break;
                };
                self.evict(victim);
                used = used.saturating_sub(chunk_bytes(victim));
                plan.evicted.push(victim);
            }
            if used + need > budget_bytes && chunk != 0 {
                break;
            }
            self.set_loading(chunk);
            used += need;
            slots -= 1;
            plan.fetch.push(chunk);
        }
        plan
    }
}

/// A node's sphere from its centre and largest scale; a non-finite shape gets a
/// sphere of radius 0 at the origin (its parent's settles it inside).
fn own_sphere([x, y, z]: [f32; 3], scale: f32) -> [f32; 4] {
    let radius = SIGMAS * scale;
    if x.is_finite() && y.is_finite() && z.is_finite() && radius.is_finite() && radius >= 0.0 {
        [x, y, z, radius]
    } else {
        [0.0, 0.0, 0.0, 0.0]
    }
}

/// `sphere` moved and shrunk as little as needed to lie inside `parent`.
fn inside(sphere: [f32; 4], parent: [f32; 4]) -> [f32; 4] {
    let room = parent[3].max(0.0) * INSIDE;
    let centre = Vec3::from_slice(&sphere[..3]);
    let parent_centre = Vec3::from_slice(&parent[..3]);
    let offset = centre - parent_centre;
    let distance = offset.length();
    if !distance.is_finite() {
        return [parent[0], parent[1], parent[2], 0.0];
    }
    if distance + sphere[3] <= room {
        return sphere;
    }
    // Keep the centre where it fits with half the room; otherwise pull it in.
    let radius = sphere[3].min(room * 0.5);
    let reach = (room - radius).max(0.0);
    let centre = if distance <= reach || distance == 0.0 {
        centre
    } else {
        parent_centre + offset * (reach / distance)
    };
    let [x, y, z] = centre.to_array();
    // Rounding of the move must not push it out.
    let radius = radius.min((room - (centre - parent_centre).length()).max(0.0));
    [x, y, z, radius]
}

/// A sphere around `spheres`, and their largest radius.
fn bound(spheres: impl Iterator<Item = [f32; 4]> + Clone) -> ([f32; 4], f32) {
    let mut count = 0.0;
    let mut sum = Vec3::ZERO;
    for s in spheres.clone() {
        sum += Vec3::from_slice(&s[..3]);
        count += 1.0;
    }
    if count == 0.0 {
        return ([0.0; 4], 0.0);
    }
    let centre = sum / count;
    let (reach, largest) = spheres.fold((0.0f32, 0.0f32), |(reach, largest), s| {
        let r = (Vec3::from_slice(&s[..3]) - centre).length() + s[3];
        (reach.max(r), largest.max(s[3]))
    });
    let [x, y, z] = centre.to_array();
    ([x, y, z, reach], largest)
}

/// The largest size on screen, in pixels, of a sphere of radius at most `largest`
/// lying inside `bound`, as the cut measures sizes (`r / (d − r)`); infinite for a
/// camera inside `bound`.
fn largest_size(bound: [f32; 4], largest: f32, camera: &StreamCamera) -> f32 {
    let distance = (Vec3::from_slice(&bound[..3]) - camera.position).length() - bound[3];
    if distance.is_nan() || distance <= 0.0 {
        return f32::INFINITY;
    }
    let size = largest / distance * camera.pixels_per_size;
    if size.is_nan() { f32::INFINITY } else { size }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A binary tree of `levels` levels breadth first: node i's children are 2i+1 and
    /// 2i+2; nodes spread along x, each level half the size of the one above.
    fn binary_tree(levels: u32) -> (Vec<([f32; 3], f32)>, Vec<[u32; 2]>) {
        let nodes = (1u32 << levels) - 1;
        let mut shapes = Vec::new();
        let mut children = Vec::new();
        for i in 0..nodes {
            let level = 31 - (i + 1).leading_zeros();
            let position = (i + 1 - (1 << level)) as f32;
            let width = 2f32.powi(-(level as i32));
            shapes.push(([(position + 0.5) * width * 16.0, 0.0, 0.0], width * 3.2));
            let first = 2 * i + 1;
            children.push(if first < nodes { [first, 2] } else { [0, 0] });
        }
        (shapes, children)
    }

    fn chunk_nodes(
        shapes: &[([f32; 3], f32)],
        children: &[[u32; 2]],
        table: &StreamTable,
        chunk: usize,
    ) -> ChunkNodes {
        let base = chunk as u32 * table.chunk_size;
        let range = base as usize..(base + table.chunk_len(chunk)) as usize;
        ChunkNodes {
            base,
            shapes: shapes[range.clone()].to_vec(),
            children: children[range].to_vec(),
        }
    }

    /// Every path from the root to a leaf meets exactly one node drawn as a leaf,
    /// every node above it is split, and nothing below it takes part.
    fn one_drawn_per_path(table: &StreamTable, children: &[[u32; 2]]) {
        let records: Vec<Option<Vec<[f32; 4]>>> =
            (0..table.chunks()).map(|c| table.records(c)).collect();
        let record = |node: u32| -> Option<[f32; 4]> {
            let chunk = table.chunk_of(node);
            let local = (node - chunk as u32 * table.chunk_size) as usize;
            records[chunk].as_ref().map(|r| r[3 * local])
        };
        let mut stack = vec![(0u32, false)];
        while let Some((node, drawn_above)) = stack.pop() {
            let radius = record(node).map_or(HIDDEN_RADIUS, |own| own[3]);
            if drawn_above {
                assert_eq!(
                    radius, HIDDEN_RADIUS,
                    "node {node} takes part below a drawn node"
                );
            } else {
                assert_ne!(
                    radius, HIDDEN_RADIUS,
                    "node {node} is the path's first missing"
                );
            }
            let drawn = drawn_above || radius == LEAF_RADIUS;
            let [start, count] = children[node as usize];
            if count == 0 {
                assert!(drawn, "leaf {node} has nothing drawn on its path");
            }
            stack.extend((start..start + count).map(|child| (child, drawn)));
        }
    }

    #[test]
    fn resident_chunks_always_draw_one_node_per_path_and_spheres_nest() {
        let (shapes, children) = binary_tree(8);
        let mut table = StreamTable::new(shapes.len() as u32, 16);
        assert!(table.insert(0, chunk_nodes(&shapes, &children, &table, 0)));
        one_drawn_per_path(&table, &children);
        // Arrivals in a scrambled order, children sometimes before parents.
        for chunk in [5, 1, 12, 2, 3, 9, 4, 15, 7, 6, 8, 10, 11, 13, 14] {
            let nodes = chunk_nodes(&shapes, &children, &table, chunk);
            assert!(table.insert(chunk, nodes));
            one_drawn_per_path(&table, &children);
        }
        // Every child's sphere inside its parent's.
        for node in 1..shapes.len() as u32 {
            let parent = (node - 1) / 2;
            let (c, p) = (table.sphere(node).unwrap(), table.sphere(parent).unwrap());
            let gap = (Vec3::from_slice(&c[..3]) - Vec3::from_slice(&p[..3])).length();
            assert!(gap + c[3] <= p[3], "node {node}: {c:?} outside {p:?}");
        }
        // Evictions from the bottom keep it whole; a chunk with resident children
        // below it stays.
        assert!(!table.evict(1));
        for chunk in (1..table.chunks()).rev() {
            assert!(table.evict(chunk), "chunk {chunk}");
            one_drawn_per_path(&table, &children);
        }
    }

    #[test]
    fn plans_fetch_the_nearest_detail_first_and_stay_within_the_budget() {
        let (shapes, children) = binary_tree(10);
        let mut table = StreamTable::new(shapes.len() as u32, 64);
        table.insert(0, chunk_nodes(&shapes, &children, &table, 0));
        let camera = StreamCamera {
            position: Vec3::new(0.0, 0.0, 2.0),
            pixels_per_size: 1000.0,
        };
        let bytes = |_| 100u64;
        let mut rounds = 0;
        loop {
            let plan = table.plan(&[camera], 2, 600, bytes);
            assert!(table.resident().count() + table.loading() <= 6);
            if plan.fetch.is_empty() {
                break;
            }
            for chunk in plan.fetch {
                let nodes = chunk_nodes(&shapes, &children, &table, chunk);
                table.insert(chunk, nodes);
            }
            one_drawn_per_path(&table, &children);
            rounds += 1;
            assert!(rounds < 100, "the plan never settles");
        }
        // The camera sits at the left end: the resident nodes of the finest two
        // levels lie mostly on its side.
        let near_far = |table: &StreamTable| -> (usize, usize) {
            let fine = (1u32 << 8) - 1;
            let resident: Vec<u32> = table
                .resident()
                .flat_map(|c| c as u32 * 64..c as u32 * 64 + table.chunk_len(c))
                .filter(|&n| n >= fine)
                .collect();
            let left = resident
                .iter()
                .filter(|&&n| shapes[n as usize].0[0] < 8.0)
                .count();
            (left, resident.len() - left)
        };
        let (left, right) = near_far(&table);
        assert!(left > 2 * right, "left {left}, right {right}");

        // The camera moves to the other end: the left detail is evicted for the right.
        let camera = StreamCamera {
            position: Vec3::new(16.0, 0.0, 2.0),
            ..camera
        };
        for _ in 0..100 {
            let plan = table.plan(&[camera], 2, 600, bytes);
            for chunk in plan.fetch {
                let nodes = chunk_nodes(&shapes, &children, &table, chunk);
                table.insert(chunk, nodes);
            }
            one_drawn_per_path(&table, &children);
            assert!(table.resident().count() <= 6);
        }
        let (left, right) = near_far(&table);
        assert!(right > 2 * left, "left {left}, right {right}");
    }

    /// With the leaves-only cut (threshold 0), the weights on every path from the
    /// root to a leaf, over the nodes that take part.
    fn path_weights(table: &StreamTable, children: &[[u32; 2]]) -> Vec<f32> {
        let records: Vec<Option<Vec<[f32; 4]>>> =
            (0..table.chunks()).map(|c| table.records(c)).collect();
        let record = |node: u32| -> Option<([f32; 4], [f32; 4])> {
            let chunk = table.chunk_of(node);
            let local = (node - chunk as u32 * table.chunk_size) as usize;
            records[chunk]
                .as_ref()
                .map(|r| (r[3 * local], r[3 * local + 2]))
        };
        let mut sums = Vec::new();
        let mut stack = vec![(0u32, 0.0f32)];
        while let Some((node, above)) = stack.pop() {
            let Some((own, fade)) = record(node).filter(|(own, _)| own[3] != HIDDEN_RADIUS) else {
                sums.push(above);
                continue;
            };
            // The GPU's rule (`preprocess_lod.wgsl`) at threshold 0.
            let below = if own[3] == LEAF_RADIUS { 0.0 } else { 1.0 };
            let weight = (1.0 - fade[0] * below).max(0.0) * fade[1];
            let [start, count] = children[node as usize];
            if count == 0 || own[3] == LEAF_RADIUS {
                sums.push(above + weight);
                continue;
            }
            stack.extend((start..start + count).map(|child| (child, above + weight)));
        }
        sums
    }

    #[test]
    fn arriving_detail_fades_in_with_every_path_covered_once() {
        let (shapes, children) = binary_tree(7);
        let mut table = StreamTable::new(shapes.len() as u32, 16);
        table.set_fade_frames(4);
        table.insert(0, chunk_nodes(&shapes, &children, &table, 0));
        table.plan(&[], 0, u64::MAX, |_| 1);
        table.advance_fades();
        assert!(
            path_weights(&table, &children)
                .iter()
                .all(|&w| (w - 1.0).abs() < 1e-6)
        );
        // Chunks 1 and 2 arrive: the nodes they split fade over four frames.
        for chunk in [1, 2] {
            let nodes = chunk_nodes(&shapes, &children, &table, chunk);
            table.insert(chunk, nodes);
        }
        let mut parents_weight = Vec::new();
        for _ in 0..6 {
            table.plan(&[], 0, u64::MAX, |_| 1);
            table.advance_fades();
            let sums = path_weights(&table, &children);
            assert!(
                sums.iter().all(|&w| (w - 1.0).abs() < 1e-5),
                "paths not covered once: {sums:?}"
            );
            // Node 7 (chunk 0) split when node 15 and 16 arrived: its own weight.
            let records = table.records(0).unwrap();
            parents_weight.push(records[3 * 7 + 2][0]);
        }
        assert_eq!(parents_weight, [0.578125, 0.875, 0.984375, 1.0, 1.0, 1.0]);

        // Waves of arrivals, one a frame: no node's weight jumps.
        let all = |table: &StreamTable| -> Vec<[f32; 4]> {
            (0..table.chunks())
                .flat_map(|c| table.records(c).unwrap_or_default())
                .collect()
        };
        let mut before = all(&table);
        for frame in 0..16 {
            if let Some(chunk) = [3, 4, 5, 6, 7].get(frame) {
                let nodes = chunk_nodes(&shapes, &children, &table, *chunk);
                table.insert(*chunk, nodes);
            }
            table.plan(&[], 0, u64::MAX, |_| 1);
            table.advance_fades();
            let sums = path_weights(&table, &children);
            assert!(
                sums.iter().all(|&w| (w - 1.0).abs() < 1e-5),
                "frame {frame}: {sums:?}"
            );
            let now = all(&table);
            if now.len() == before.len() {
                for (i, (a, b)) in before.iter().zip(&now).enumerate() {
                    if i % 3 == 2 {
                        let step = (a[0] - b[0]).abs().max((a[1] - b[1]).abs());
                        assert!(
                            step <= 0.58 + 1e-6,
                            "frame {frame}, record {i}: {a:?} -> {b:?}"
                        );
                    }
                }
            }
            before = now;
        }
    }

    #[test]
    fn mismatched_chunks_fail_instead_of_joining() {
        let (shapes, children) = binary_tree(4);
        let mut table = StreamTable::new(shapes.len() as u32, 4);
        let mut nodes = chunk_nodes(&shapes, &children, &table, 1);
        nodes.shapes.pop();
        assert!(!table.insert(1, nodes));
        assert_eq!(table.residency(1), Some(Residency::Failed));
        assert!(!table.insert(9, chunk_nodes(&shapes, &children, &table, 0)));
    }
}
