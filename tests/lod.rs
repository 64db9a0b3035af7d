//! `SplatLod` on lavapipe: a budget that covers the cloud draws exactly what a camera
//! without one draws; a small budget draws a cut of the cloud's tree within the
//! budget, coarser but close to the exact image; and the cut blends rather than pops.
//! A `.rad` file's own tree is drawn as it is, within the budget too, and so is the
//! tree a streamed SOG's levels make.

mod common;
mod reference_raster;

use bevy::math::UVec2;
use bevy::prelude::*;
use bevy_splat::asset::formats::ply;
use bevy_splat::headless::{Headless, HeadlessCamera};
use bevy_splat::lod::SplatLodTrees;
use bevy_splat::{GaussianSplats, SplatLod, SplatStats};

use reference_raster::{max_difference, psnr};

const SIZE: UVec2 = UVec2::new(96, 128);

fn angel() -> GaussianSplats {
    let bytes =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/angel.ply")).expect("the angel");
    GaussianSplats::from(ply::decode(&bytes).expect("it decodes"))
}

/// An app drawing the angel to one camera, with `lod` on the camera.
fn scene(lod: Option<SplatLod>, distance: f32) -> (Headless, HeadlessCamera, usize) {
    scene_of(angel(), lod, distance)
}

fn scene_of(
    splats: GaussianSplats,
    lod: Option<SplatLod>,
    distance: f32,
) -> (Headless, HeadlessCamera, usize) {
    let mut headless = Headless::new(common::headless_plugins());
    let count = splats.len();
    let handle = headless.add_splats(splats);
    headless.spawn_cloud(handle, Transform::IDENTITY);
    let camera = common::spawn_angel_camera(&mut headless, SIZE, distance);
    if let Some(lod) = lod {
        headless
            .app
            .world_mut()
            .entity_mut(camera.entity)
            .insert(lod);
    }
    (headless, camera, count)
}

/// Updates until the tree is built and the camera's cut has settled (its threshold
/// unchanged for a while), then renders.
fn settled_render(headless: &mut Headless, camera: &HeadlessCamera) -> (Vec<u8>, f32, u32) {
    settled_image(headless, camera, |_| {})
}

fn settled_image(
    headless: &mut Headless,
    camera: &HeadlessCamera,
    keep: impl FnOnce(&bevy_splat::headless::Rgba8),
) -> (Vec<u8>, f32, u32) {
    let mut last = None;
    let mut steady = 0;
    for _ in 0..2000 {
        headless.app.update();
        let built = headless
            .app
            .world()
            .resource::<SplatLodTrees>()
            .iter()
            .count()
            > 0;
        let lod = headless
            .app
            .world()
            .resource::<SplatStats>()
            .get(camera.entity)
            .and_then(|s| s.lod);
        if built && lod.is_some() && lod.map(|l| l.threshold) == last {
            steady += 1;
        } else {
            steady = 0;
        }
        last = lod.map(|l| l.threshold);
        if steady >= 12 {
            break;
        }
    }
    assert!(steady >= 12, "the cut never settled");
    let image = headless
        .render(std::slice::from_ref(camera))
        .expect("the render")
        .remove(0);
    keep(&image);
    let stats = headless
        .app
        .world()
        .resource::<SplatStats>()
        .get(camera.entity)
        .expect("the camera's stats");
    (
        image.rgb(),
        stats.lod.expect("a cut").threshold,
        stats.visible_splats,
    )
}

fn exact_render(distance: f32) -> Vec<u8> {
    let (mut headless, camera, _) = scene(None, distance);
    let image = headless
        .render(std::slice::from_ref(&camera))
        .expect("the render")
        .remove(0);
    if let Ok(dir) = std::env::var("LOD_TEST_PNG") {
        let _ = image.save_png(format!("{dir}/exact-{distance}.png"));
    }
    image.rgb()
}

#[test]
fn a_budget_that_covers_the_cloud_draws_the_exact_image() {
    let exact = exact_render(1.0);
    let (mut headless, camera, count) = scene(Some(SplatLod::with_budget(10_000_000)), 1.0);
    let (image, threshold, _) = settled_render(&mut headless, &camera);
    assert!(count > 1000);
    assert_eq!(threshold, 0.0, "the leaves alone");
    assert!(image.iter().any(|&v| v > 0));
    let worst = max_difference(&exact, &image);
    assert!(worst <= 1, "differs from the exact image by {worst}/255");
}

#[test]
fn a_small_budget_draws_a_coarser_cut_within_it_and_more_budget_draws_closer() {
    let count = angel().len();
    for distance in [4.0, 1.0] {
        let exact = exact_render(distance);
        let mut previous: Option<(f32, f64)> = None;
        for budget in [count / 16, count / 4] {
            let budget = budget as u32;
            let (mut headless, camera, _) = scene(Some(SplatLod::with_budget(budget)), distance);
            let (image, threshold, visible) = settled_image(&mut headless, &camera, |image| {
                if let Ok(dir) = std::env::var("LOD_TEST_PNG") {
                    let _ = image.save_png(format!("{dir}/lod-{distance}-{budget}.png"));
                }
            });
            assert!(threshold > 0.0, "a cut above the leaves");
            // Visible splats are the drawn nodes that survived culling: never more
            // than the cut, which the budget holds (to a bin's rounding).
            assert!(
                f64::from(visible) <= f64::from(budget) * 1.1,
                "{visible} drawn for a budget of {budget}"
            );
            assert!(
                visible > budget / 4,
                "{visible} drawn for a budget of {budget}"
            );
            let quality = psnr(&exact, &image);
            println!(
                "distance {distance}, budget {budget}: {visible} of {count} splats drawn, \
                 threshold {threshold:.2e}, {quality:.1} dB from the exact image"
            );
            assert!(quality > 12.0, "{quality:.1} dB from the exact image");
            if let Some((coarser_threshold, coarser_quality)) = previous {
                assert!(threshold < coarser_threshold, "more budget, finer cut");
                assert!(
                    quality > coarser_quality,
                    "more budget, closer to the exact image"
                );
            }
            previous = Some((threshold, quality));
        }
    }
}

#[test]
fn a_pick_on_a_coarse_cut_names_one_of_the_assets_splats() {
    use bevy_splat::render::{SplatPickAnswers, SplatPickRequest};
    let count = angel().len();
    let (mut headless, camera, _) = scene(Some(SplatLod::with_budget((count / 16) as u32)), 1.0);
    // Pixels across the statue: most land on merged nodes of the coarse cut.
    let pixels: Vec<UVec2> = (0..16)
        .map(|i| UVec2::new(SIZE.x / 2, SIZE.y / 8 + i * SIZE.y / 24))
        .collect();
    headless
        .app
        .world_mut()
        .entity_mut(camera.entity)
        .insert(SplatPickRequest {
            id: 7,
            pixels,
            ignored: Vec::new(),
        });
    let (_, threshold, _) = settled_render(&mut headless, &camera);
    assert!(threshold > 0.0, "a coarse cut");
    let mut hits = Vec::new();
    for _ in 0..20 {
        headless.app.update();
        if let Some(answer) = headless
            .app
            .world()
            .resource::<SplatPickAnswers>()
            .take(camera.entity)
        {
            hits.extend(answer.hits.into_iter().flatten());
        }
    }
    assert!(!hits.is_empty(), "the picks hit the statue");
    for hit in hits {
        assert!(
            (hit.splat_index as usize) < count,
            "pick index {} is not one of the {count} splats",
            hit.splat_index
        );
    }
}

/// The angel as Spark's `build-lod` wrote it (`tests/data/rad/`), with its tree.
fn angel_from_rad(with_tree: bool) -> GaussianSplats {
    use bevy_splat::asset::formats::rad;
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/rad/angel_sh0-chunked"
    );
    let read = |name: &str| std::fs::read(format!("{dir}/{name}")).expect("the fixture");
    let header = read("angel_sh0-lod.rad");
    let chunks: Vec<(String, Vec<u8>)> = rad::chunk_files(&header)
        .expect("a header")
        .into_iter()
        .map(|name| {
            let bytes = read(&name);
            (name, bytes)
        })
        .collect();
    let file = rad::decode_nodes_with(&header, |name| {
        chunks
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
    })
    .expect("it decodes");
    let (leaves, tree) = file.leaves_and_tree();
    let splats = GaussianSplats::from(leaves);
    match (with_tree, tree) {
        (true, Some(tree)) => splats.with_file_tree(tree),
        _ => splats,
    }
}

#[test]
fn a_rad_files_own_tree_draws_cuts_within_the_budget() {
    let count = angel_from_rad(false).len();
    let (mut exact_app, exact_camera, _) = scene_of(angel_from_rad(false), None, 1.0);
    let exact = exact_app
        .render(std::slice::from_ref(&exact_camera))
        .expect("the render")
        .remove(0)
        .rgb();
    let budget = (count / 8) as u32;
    for with_tree in [true, false] {
        let lod = Some(SplatLod::with_budget(budget));
        let (mut headless, camera, _) = scene_of(angel_from_rad(with_tree), lod, 1.0);
        let (image, threshold, visible) = settled_render(&mut headless, &camera);
        let trees = headless.app.world().resource::<SplatLodTrees>();
        let nodes = trees.iter().map(|(_, lod)| lod.tree.len()).sum::<usize>();
        if with_tree {
            assert_eq!(nodes, 98_225, "Spark's tree, as the file has it");
        } else {
            assert_ne!(nodes, 98_225, "a tree of our own");
        }
        assert!(threshold > 0.0, "a cut above the leaves");
        assert!(
            f64::from(visible) <= f64::from(budget) * 1.1,
            "{visible} drawn for {budget}"
        );
        assert!(visible > budget / 4, "{visible} drawn for {budget}");
        let db = psnr(&exact, &image);
        println!(
            "{} tree: {visible} of {count} drawn, {db:.1} dB from the exact image",
            if with_tree { "the file's" } else { "our own" }
        );
        assert!(db > 12.0, "{db:.1} dB");
    }
}

#[test]
fn a_streamed_sogs_own_levels_draw_cuts_within_the_budget() {
    // splat-transform's fruit scan in two levels: the coarse level (half the splats)
    // is the tree's interior, so a budget of half draws mostly the file's own coarse
    // splats.
    let mut app = common::asset_app(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"));
    let splats = common::load_splats(&mut app, "sog/fruit_lod/lod-meta.json").expect("it loads");
    assert!(splats.file_tree().is_some());
    let count = splats.len();
    let bounds = splats.bounds().expect("bounds");
    let centre = Vec3::from(bounds.center);
    let eye = centre + Vec3::from(bounds.half_extents) * Vec3::new(0.4, 0.6, 2.5);
    let view = |headless: &mut Headless| {
        headless.spawn_camera(
            Transform::from_translation(eye).looking_at(centre, Vec3::Y),
            common::angel_projection(SIZE),
            SIZE,
            None,
        )
    };
    let mut exact_app = Headless::new(common::headless_plugins());
    let handle = exact_app.add_splats(splats.clone());
    exact_app.spawn_cloud(handle, Transform::IDENTITY);
    let exact_camera = view(&mut exact_app);
    let exact = exact_app
        .render(std::slice::from_ref(&exact_camera))
        .expect("the render")
        .remove(0);

    let mut headless = Headless::new(common::headless_plugins());
    let handle = headless.add_splats(splats);
    headless.spawn_cloud(handle, Transform::IDENTITY);
    let camera = view(&mut headless);
    let budget = (count / 2) as u32;
    headless
        .app
        .world_mut()
        .entity_mut(camera.entity)
        .insert(SplatLod::with_budget(budget));
    let (image, threshold, visible) = settled_image(&mut headless, &camera, |image| {
        if let Ok(dir) = std::env::var("LOD_TEST_PNG") {
            let _ = image.save_png(format!("{dir}/fruit-sog-levels.png"));
            let _ = exact.save_png(format!("{dir}/fruit-exact.png"));
        }
    });
    let trees = headless.app.world().resource::<SplatLodTrees>();
    let nodes = trees.iter().map(|(_, lod)| lod.tree.len()).sum::<usize>();
    let db = psnr(&exact.rgb(), &image);
    println!("the SOG's levels: {nodes} nodes, {visible} of {count} drawn, {db:.1} dB");
    assert!(
        nodes > count + count / 3,
        "the file's levels: {nodes} nodes"
    );
    assert!(threshold > 0.0, "a cut above the leaves");
    assert!(f64::from(visible) <= f64::from(budget) * 1.1, "{visible}");
    assert!(db > 15.0, "{db:.1} dB");
}

/// A far camera with a pixel floor weighs only the nodes its cut can reach: blocks of
/// nodes whose parents are all below the floor (the angel's larger splats keep about
/// half of them) are left out of the dispatch, and the image is the one drawn when
/// every node is weighed. A second instance of the asset behind the camera, close to
/// it, makes every block reachable again (the dispatch is shared by the asset's
/// instances) while drawing nothing itself.
#[test]
fn a_far_cut_weighs_only_the_nodes_it_can_reach_and_draws_the_same_image() {
    let cut = SplatLod {
        budget: u32::MAX,
        pixel_scale: 8.0,
        ..SplatLod::default()
    };
    let distance = 12.0;
    let render = |with_near_twin: bool| {
        let mut headless = Headless::new(common::headless_plugins());
        let splats = angel();
        let count = splats.len();
        let handle = headless.add_splats(splats);
        headless.spawn_cloud(handle.clone(), Transform::IDENTITY);
        let camera = common::spawn_angel_camera(&mut headless, SIZE, distance);
        headless
            .app
            .world_mut()
            .entity_mut(camera.entity)
            .insert(cut);
        if with_near_twin {
            // 1.5 units behind the camera along its line of sight: every block of the
            // twin's nodes is near enough to be reached, and none of it is in view.
            let eye = headless
                .app
                .world()
                .get::<Transform>(camera.entity)
                .expect("the camera's transform")
                .translation;
            let back = (eye - Vec3::new(0.0, 0.75, 0.0)).normalize();
            headless.spawn_cloud(handle, Transform::from_translation(eye + 1.5 * back));
        }
        let (image, threshold, _) = settled_render(&mut headless, &camera);
        let lod = headless
            .app
            .world()
            .resource::<SplatStats>()
            .get(camera.entity)
            .and_then(|s| s.lod)
            .expect("a cut");
        (image, threshold, lod.nodes_weighed, count)
    };
    let (far, threshold, weighed, count) = render(false);
    let (shared, shared_threshold, shared_weighed, _) = render(true);
    assert!(threshold > 0.0, "the cut stops at the pixel floor");
    assert_eq!(threshold, shared_threshold);
    // With the twin every node of both instances is weighed; alone, the far cloud
    // leaves out at least a quarter of its leaves' worth.
    let every_node = shared_weighed / 2;
    assert!(every_node > count as u64, "{shared_weighed}");
    assert!(
        weighed + count as u64 / 4 < every_node,
        "{weighed} nodes weighed of {every_node}"
    );
    assert!(far.iter().any(|&v| v > 0));
    let worst = max_difference(&far, &shared);
    assert_eq!(worst, 0, "the reachable nodes draw the same image");
}
