//! The plugin on the outside, as Bevy's own types behave: every public component and
//! resource is in the app's type registry once the plugins are added (without relying
//! on `reflect_auto_register`), reads back field by field through reflection, has a
//! reflected default, and a crop survives the reflection serializer that Bevy's scenes
//! use; user systems ordered against `SplatSystems` see the plugin's work of the same
//! frame. No renderer: the plugins work as plain data there.
#![cfg(all(feature = "gltf", feature = "picking"))]

use std::any::TypeId;

use bevy::ecs::reflect::{AppTypeRegistry, ReflectComponent, ReflectResource};
use bevy::prelude::*;
use bevy::reflect::serde::{TypedReflectDeserializer, TypedReflectSerializer};
use bevy::reflect::structs::GetField;
use bevy::reflect::{PartialReflect, ReflectRef, TypeRegistration, TypeRegistry};
use serde::de::DeserializeSeed;

use bevy_splat::asset::{GaussianSceneNode, SplatGeometry};
use bevy_splat::{
    GaussianCloud, GaussianScene, GaussianSceneRoot, GaussianSceneSpawned, GaussianSplatPlugin,
    GaussianSplats, SplatCrop, SplatCropMode, SplatCropShape, SplatCropVolume, SplatGpuLimits,
    SplatMemory, SplatPickingCamera, SplatPickingPlugin, SplatPickingSettings, SplatRasterMode,
    SplatRaycastPlugin, SplatSystems, SplatTint,
};

/// Every plugin of the crate, no renderer, no picking input: enough to register types
/// and run the main-world systems that need nothing from the GPU.
fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin::default(),
        TransformPlugin,
        GaussianSplatPlugin,
        SplatRaycastPlugin,
    ));
    app
}

fn registry(app: &App) -> AppTypeRegistry {
    app.world().resource::<AppTypeRegistry>().clone()
}

fn registration<T: 'static>(registry: &TypeRegistry) -> &TypeRegistration {
    registry
        .get(TypeId::of::<T>())
        .unwrap_or_else(|| panic!("{} is not registered", std::any::type_name::<T>()))
}

/// Inserts `value` on a new entity through its `ReflectComponent` (as a scene spawns
/// it), reads it back the same way and checks it against `value`; the reflected
/// default must be `T::default()` where `T` has one. Returns the entity.
fn component_round_trip<T>(world: &mut World, registry: &TypeRegistry, value: &T) -> Entity
where
    T: Component + Reflect + PartialEq + std::fmt::Debug,
{
    let registration = registration::<T>(registry);
    let reflect_component = registration
        .data::<ReflectComponent>()
        .unwrap_or_else(|| panic!("{} has no ReflectComponent", std::any::type_name::<T>()));
    let mut entity = world.spawn_empty();
    reflect_component.insert(&mut entity, value.as_partial_reflect(), registry);
    let id = entity.id();
    let read = reflect_component
        .reflect(world.entity(id))
        .expect("the component was inserted");
    assert_eq!(
        read.reflect_partial_eq(value.as_partial_reflect()),
        Some(true),
        "{} through ReflectPartialEq",
        std::any::type_name::<T>()
    );
    assert_eq!(read.downcast_ref::<T>(), Some(value));
    assert_eq!(world.get::<T>(id), Some(value), "the typed component");
    id
}

/// `T`'s registered `ReflectDefault` gives `T::default()`.
fn check_default<T: Reflect + Default + PartialEq + std::fmt::Debug>(registry: &TypeRegistry) {
    let default = registration::<T>(registry)
        .data::<ReflectDefault>()
        .unwrap_or_else(|| panic!("{} has no ReflectDefault", std::any::type_name::<T>()))
        .default();
    assert_eq!(default.downcast_ref::<T>(), Some(&T::default()));
}

/// The reflected component on `entity` as a struct, for field checks.
fn reflected<'w, T: Component + Reflect>(
    world: &'w World,
    registry: &TypeRegistry,
    entity: Entity,
) -> &'w dyn Reflect {
    registration::<T>(registry)
        .data::<ReflectComponent>()
        .expect("reflected component")
        .reflect(world.entity(entity))
        .expect("present")
}

#[test]
fn cloud_components_read_back_through_the_registry() {
    let mut app = app();
    let registry = registry(&app);
    let registry = registry.read();
    let handle = app
        .world_mut()
        .resource_mut::<Assets<GaussianSplats>>()
        .reserve_handle();
    let world = app.world_mut();

    let cloud = GaussianCloud(handle.clone());
    let entity = component_round_trip(world, &registry, &cloud);
    check_default::<GaussianCloud>(&registry);
    let ReflectRef::TupleStruct(fields) =
        reflected::<GaussianCloud>(world, &registry, entity).reflect_ref()
    else {
        panic!("GaussianCloud reflects as a tuple struct");
    };
    let field = fields.field(0).expect("the handle");
    assert_eq!(
        field.try_downcast_ref::<Handle<GaussianSplats>>(),
        Some(&handle)
    );

    let mode = SplatRasterMode::Antialiased;
    let entity = component_round_trip(world, &registry, &mode);
    check_default::<SplatRasterMode>(&registry);
    let ReflectRef::Enum(variant) =
        reflected::<SplatRasterMode>(world, &registry, entity).reflect_ref()
    else {
        panic!("SplatRasterMode reflects as an enum");
    };
    assert_eq!(variant.variant_name(), "Antialiased");

    let tint = SplatTint {
        rgb: Vec3::new(0.5, 1.5, 2.0),
        opacity: 0.25,
    };
    let entity = component_round_trip(world, &registry, &tint);
    check_default::<SplatTint>(&registry);
    let ReflectRef::Struct(fields) = reflected::<SplatTint>(world, &registry, entity).reflect_ref()
    else {
        panic!("SplatTint reflects as a struct");
    };
    assert_eq!(fields.get_field::<f32>("opacity"), Some(&0.25));
    assert_eq!(
        fields.get_field::<Vec3>("rgb"),
        Some(&Vec3::new(0.5, 1.5, 2.0))
    );

    let crop = crop();
    let entity = component_round_trip(world, &registry, &crop);
    check_default::<SplatCrop>(&registry);
    check_default::<SplatCropMode>(&registry);
    let ReflectRef::Struct(fields) = reflected::<SplatCrop>(world, &registry, entity).reflect_ref()
    else {
        panic!("SplatCrop reflects as a struct");
    };
    let ReflectRef::List(volumes) = fields.field("volumes").expect("volumes").reflect_ref() else {
        panic!("volumes reflect as a list");
    };
    assert_eq!(volumes.len(), 2);
    let ReflectRef::Struct(second) = volumes.get(1).expect("a second volume").reflect_ref() else {
        panic!("a SplatCropVolume reflects as a struct");
    };
    assert_eq!(
        second.get_field::<SplatCropMode>("mode"),
        Some(&SplatCropMode::Cut)
    );
    let ReflectRef::Enum(shape) = second.field("shape").expect("shape").reflect_ref() else {
        panic!("SplatCropShape reflects as an enum");
    };
    assert_eq!(shape.variant_name(), "Sphere");
    assert_eq!(
        shape
            .field("radius")
            .and_then(|radius| radius.try_downcast_ref::<f32>()),
        Some(&0.5)
    );
    for nested in [
        TypeId::of::<SplatCropVolume>(),
        TypeId::of::<SplatCropShape>(),
        TypeId::of::<SplatCropMode>(),
    ] {
        assert!(registry.get(nested).is_some());
    }
}

fn crop() -> SplatCrop {
    SplatCrop {
        volumes: vec![
            SplatCropVolume {
                shape: SplatCropShape::Box {
                    centre: Vec3::new(1.0, 2.0, 3.0),
                    half_size: Vec3::splat(4.0),
                    rotation: Quat::from_rotation_y(0.5),
                },
                mode: SplatCropMode::Keep,
            },
            SplatCropVolume::cut_sphere(Vec3::ZERO, 0.5),
        ],
    }
}

#[test]
fn scene_components_read_back_through_the_registry() {
    let mut app = app();
    let registry = registry(&app);
    let registry = registry.read();
    let handle = app
        .world_mut()
        .resource_mut::<Assets<GaussianScene>>()
        .reserve_handle();
    let world = app.world_mut();

    let root = GaussianSceneRoot(handle.clone());
    component_round_trip(world, &registry, &root);
    check_default::<GaussianSceneRoot>(&registry);

    let nodes = vec![world.spawn_empty().id(), world.spawn_empty().id()];
    let spawned = GaussianSceneSpawned {
        nodes: nodes.clone(),
    };
    let entity = component_round_trip(world, &registry, &spawned);
    let ReflectRef::Struct(fields) =
        reflected::<GaussianSceneSpawned>(world, &registry, entity).reflect_ref()
    else {
        panic!("GaussianSceneSpawned reflects as a struct");
    };
    assert_eq!(fields.get_field::<Vec<Entity>>("nodes"), Some(&nodes));
}

#[test]
fn picking_components_and_resources_read_back_through_the_registry() {
    let mut app = app();
    app.add_plugins(SplatPickingPlugin);
    let registry = registry(&app);
    let registry = registry.read();
    let world = app.world_mut();

    component_round_trip(world, &registry, &SplatPickingCamera);
    check_default::<SplatPickingCamera>(&registry);
    check_default::<SplatPickingSettings>(&registry);
    assert!(registry.get(TypeId::of::<bevy_splat::SplatHit>()).is_some());

    world.insert_resource(SplatPickingSettings {
        require_markers: true,
    });
    let settings = resource::<SplatPickingSettings>(world, &registry);
    let ReflectRef::Struct(fields) = settings.reflect_ref() else {
        panic!("SplatPickingSettings reflects as a struct");
    };
    assert_eq!(fields.get_field::<bool>("require_markers"), Some(&true));
}

/// The resource `R` read through the registry: in Bevy 0.19 a resource is a component
/// on its own entity, and `ReflectResource` implies `ReflectComponent`.
fn resource<'w, R: Resource + Reflect>(
    world: &'w World,
    registry: &TypeRegistry,
) -> &'w dyn Reflect {
    let registration = registration::<R>(registry);
    assert!(
        registration.data::<ReflectResource>().is_some(),
        "{} has no ReflectResource",
        std::any::type_name::<R>()
    );
    let id = world.component_id::<R>().expect("the resource exists");
    let entity = world
        .resource_entities()
        .get(id)
        .expect("the resource's entity");
    registration
        .data::<ReflectComponent>()
        .expect("ReflectResource brings ReflectComponent")
        .reflect(world.entity(entity))
        .expect("the resource on its entity")
}

#[test]
fn render_resources_read_back_through_the_registry() {
    let mut app = app();
    let registry = registry(&app);
    let registry = registry.read();
    let world = app.world_mut();

    check_default::<SplatGpuLimits>(&registry);
    world.insert_resource(SplatGpuLimits {
        max_storage_binding_bytes: Some(1 << 20),
        ..default()
    });
    let limits = resource::<SplatGpuLimits>(world, &registry);
    let ReflectRef::Struct(fields) = limits.reflect_ref() else {
        panic!("SplatGpuLimits reflects as a struct");
    };
    assert_eq!(
        fields.get_field::<Option<u64>>("max_storage_binding_bytes"),
        Some(&Some(1 << 20))
    );

    // An opaque value: a reflected clone shares the renderer's counter.
    let memory = resource::<SplatMemory>(world, &registry);
    assert!(matches!(memory.reflect_ref(), ReflectRef::Opaque(_)));
    let copy = memory.reflect_clone().expect("reflect_clone");
    let copy = copy.downcast_ref::<SplatMemory>().expect("a SplatMemory");
    assert_eq!(copy.bytes(), world.resource::<SplatMemory>().bytes());
    assert!(
        registration::<SplatMemory>(&registry)
            .data::<ReflectDefault>()
            .is_some()
    );
}

/// A crop through the reflection serializer and back (what a `DynamicScene` file holds
/// for it), here as JSON.
#[test]
fn a_crop_survives_the_reflection_serializer() {
    let app = app();
    let registry = registry(&app);
    let registry = registry.read();
    let crop = crop();
    let json = serde_json::to_string(&TypedReflectSerializer::new(
        crop.as_partial_reflect(),
        &registry,
    ))
    .expect("serialize");
    let mut deserializer = serde_json::Deserializer::from_str(&json);
    let read = TypedReflectDeserializer::new(registration::<SplatCrop>(&registry), &registry)
        .deserialize(&mut deserializer)
        .expect("deserialize");
    let read = <SplatCrop as bevy::reflect::FromReflect>::from_reflect(read.as_ref())
        .expect("a SplatCrop");
    assert_eq!(read, crop, "{json}");
}

/// Order flags of the systems below: each runs after one of the plugin's sets and
/// records what it saw.
#[derive(Resource, Default)]
struct Seen {
    bounds: Option<bool>,
    scene_nodes: Option<usize>,
}

#[test]
fn systems_ordered_after_splat_systems_see_their_work_the_same_frame() {
    let mut app = app();
    app.init_resource::<Seen>()
        .add_systems(
            PostUpdate,
            (|clouds: Query<Has<bevy::camera::primitives::Aabb>, With<GaussianCloud>>,
              mut seen: ResMut<Seen>| {
                seen.bounds = clouds.single().ok();
            })
            .after(SplatSystems::Bounds),
        )
        .add_systems(
            Update,
            (|spawned: Query<&GaussianSceneSpawned>, mut seen: ResMut<Seen>| {
                seen.scene_nodes = spawned.single().ok().map(|s| s.nodes.len());
            })
            .after(SplatSystems::SceneSpawn),
        );
    let splats = GaussianSplats::new(
        vec![SplatGeometry {
            position: [0.0, 0.0, 0.0],
            opacity_logit: 2.0,
            rotation: [1.0, 0.0, 0.0, 0.0],
            log_scale: [0.0; 3],
            _pad: 0.0,
        }],
        vec![0.0; 3],
        0,
    )
    .expect("a valid splat");
    let world = app.world_mut();
    let splats = world.resource_mut::<Assets<GaussianSplats>>().add(splats);
    let scene = GaussianScene {
        nodes: vec![
            GaussianSceneNode {
                name: None,
                transform: Transform::IDENTITY,
                children: vec![1],
                clouds: vec![],
            },
            GaussianSceneNode {
                name: Some("leaf".into()),
                transform: Transform::from_xyz(1.0, 0.0, 0.0),
                children: vec![],
                clouds: vec![splats.clone()],
            },
        ],
        roots: vec![0],
    };
    let scene = world.resource_mut::<Assets<GaussianScene>>().add(scene);
    world.spawn(GaussianSceneRoot(scene));

    app.update();
    let seen = app.world().resource::<Seen>();
    assert_eq!(
        seen.scene_nodes,
        Some(2),
        "the scene's nodes are spawned before systems after SceneSpawn run"
    );
    assert_eq!(
        seen.bounds,
        Some(true),
        "the scene's cloud has its Aabb before systems after Bounds run"
    );
}
