//! The families and how each is detected.

use std::sync::Arc;

use super::procfs::SharedTree;
use super::procs::GpuMemory;
use super::{
    amd, apple, cpu, dcgm, dcgm_exporter, disk, ipu, memory, network, neuron, tpu, Collector,
    NvidiaCollector, NvmlBackend, SamplerOptions,
};

/// Context given to detectors.
pub(super) struct Detect<'a> {
    pub(super) opts: &'a SamplerOptions,
    pub(super) tree: &'a SharedTree,
    /// Per-process GPU memory for the process table (the NVML collector fills it).
    pub(super) gpu_memory: &'a Arc<GpuMemory>,
}

pub(super) type Detector = fn(&Detect<'_>) -> Result<Box<dyn Collector>, String>;

fn linux_only() -> Result<(), String> {
    if cfg!(target_os = "linux") && std::path::Path::new("/proc/self/stat").exists() {
        Ok(())
    } else {
        Err("needs Linux /proc".to_string())
    }
}

/// Every built-in family, in sampling order. A new accelerator (Apple, TPU, Trainium,
/// IPU) is one module plus one line here.
pub(super) const DETECTORS: &[(&str, Detector)] = &[
    ("cpu", |d| {
        linux_only()?;
        Ok(Box::new(cpu::CpuCollector::new(d.tree.clone())))
    }),
    ("memory", |d| {
        linux_only()?;
        Ok(Box::new(memory::MemoryCollector::new(d.tree.clone())))
    }),
    ("disk", |d| {
        linux_only()?;
        Ok(Box::new(disk::DiskCollector::new(&d.opts.disk_paths)))
    }),
    ("network", |_| {
        linux_only()?;
        network::NetworkCollector::new()
            .map(|c| Box::new(c) as Box<dyn Collector>)
            .map_err(|e| e.to_string())
    }),
    ("dcgm", |d| {
        dcgm::detect(d.opts).map(|c| Box::new(c) as Box<dyn Collector>)
    }),
    ("nvidia", |d| {
        let backend = NvmlBackend::init().map_err(|e| e.to_string())?;
        Ok(Box::new(
            NvidiaCollector::with_tree(backend, Some(d.tree.clone()))
                .without_gpm_on(d.opts.dcgm_claims.clone())
                .with_proc_memory(d.gpu_memory.clone()),
        ))
    }),
    ("amd", |_| {
        amd::AmdCollector::detect().map(|c| Box::new(c) as Box<dyn Collector>)
    }),
    ("apple", |d| {
        apple::AppleCollector::detect(d.opts.interval).map(|c| Box::new(c) as _)
    }),
    ("ipu", |d| {
        ipu::IpuCollector::detect(d).map(|c| Box::new(c) as _)
    }),
    ("dcgm-exporter", |d| dcgm_exporter::detect(d.opts)),
    ("neuron", |d| {
        neuron::NeuronCollector::detect(d.opts).map(|c| Box::new(c) as Box<dyn Collector>)
    }),
    ("tpu", |d| {
        tpu::TpuCollector::detect(d.opts.interval).map(|c| Box::new(c) as Box<dyn Collector>)
    }),
];
