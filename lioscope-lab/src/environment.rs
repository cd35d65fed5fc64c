//! What machine an experiment ran on, for its report: CPU model, sockets, cores and
//! threads per core (sysfs, then /proc/cpuinfo), the kernel release, the hypervisor
//! (the CPU's `hypervisor` flag and /sys/hypervisor/type, or the DMI vendor), and
//! lioscope's version. A figure no source reports is `null`, never guessed.

use lioscope::stats::osstat;

/// The machine an experiment ran on.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Environment {
    pub cpu_model: Option<String>,
    pub logical_cpus: u32,
    pub cores: u32,
    pub sockets: u32,
    pub threads_per_core: u32,
    /// CPUs this process may run on (affinity and cgroup quota).
    pub usable_cpus: usize,
    pub kernel: Option<String>,
    /// "none" when the CPU does not report running under one.
    pub hypervisor: Option<String>,
    /// The host's name (`/proc/sys/kernel/hostname`): with the CPU model, what the
    /// results history calls one machine.
    pub host: Option<String>,
    pub lioscope_version: &'static str,
    /// The commit lioscope-lab was built from ("unknown" outside a git checkout).
    pub lioscope_commit: &'static str,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// The hypervisor's name from its CPUID signature (leaf 0x4000_0000, as `lscpu` reads
/// it), when the CPU reports one lioscope knows; the raw signature otherwise.
#[cfg(target_arch = "x86_64")]
fn cpuid_hypervisor() -> Option<String> {
    let leaf = std::arch::x86_64::__cpuid(0x4000_0000);
    let bytes: Vec<u8> = [leaf.ebx, leaf.ecx, leaf.edx].iter().flat_map(|r| r.to_le_bytes()).collect();
    hypervisor_name(&bytes)
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_hypervisor() -> Option<String> {
    None
}

/// The vendor a hypervisor's 12-byte CPUID signature names.
fn hypervisor_name(signature: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(signature).trim_matches(|c: char| c == '\0' || c.is_whitespace()).to_owned();
    let known = [
        ("KVMKVMKVM", "KVM"),
        ("Microsoft Hv", "Microsoft Hyper-V"),
        ("VMwareVMware", "VMware"),
        ("XenVMMXenVMM", "Xen"),
        ("TCGTCGTCGTCG", "QEMU (TCG)"),
        ("VBoxVBoxVBox", "VirtualBox"),
        ("bhyve bhyve", "bhyve"),
        ("ACRNACRNACRN", "ACRN"),
        ("lrpepyh  vr", "Parallels"),
    ];
    match known.iter().find(|(sig, _)| text.starts_with(sig)) {
        Some((_, name)) => Some((*name).to_owned()),
        None if text.chars().all(|c| c.is_ascii_graphic() || c == ' ') && !text.is_empty() => {
            Some(format!("unknown (CPUID signature \"{text}\")"))
        }
        None => None,
    }
}

impl Environment {
    pub fn read() -> Environment {
        let topology = osstat::read_topology();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flagged =
            cpuinfo.lines().any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"));
        let hypervisor = if cpuinfo.is_empty() {
            None
        } else if flagged {
            Some(
                cpuid_hypervisor()
                    .or_else(|| read("/sys/hypervisor/type"))
                    .or_else(|| read("/sys/class/dmi/id/sys_vendor"))
                    .unwrap_or_else(|| "present (type not reported)".to_owned()),
            )
        } else {
            Some("none".to_owned())
        };
        Environment {
            cpu_model: topology.model_name,
            logical_cpus: topology.logical_cpus,
            cores: topology.cores,
            sockets: topology.sockets,
            threads_per_core: topology.threads_per_core,
            usable_cpus: osstat::usable_cpus(),
            kernel: read("/proc/sys/kernel/osrelease"),
            hypervisor,
            host: read("/proc/sys/kernel/hostname"),
            lioscope_version: env!("CARGO_PKG_VERSION"),
            lioscope_commit: env!("LIOSCOPE_COMMIT"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypervisor_signatures_name_their_vendors() {
        assert_eq!(hypervisor_name(b"KVMKVMKVM\0\0\0").as_deref(), Some("KVM"));
        assert_eq!(hypervisor_name(b"Microsoft Hv").as_deref(), Some("Microsoft Hyper-V"));
        assert_eq!(hypervisor_name(b"NewVisorABCD").as_deref(), Some("unknown (CPUID signature \"NewVisorABCD\")"));
        assert_eq!(hypervisor_name(&[0; 12]), None);
    }
}
