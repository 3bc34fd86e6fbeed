"""Tracing: what the package knows of each tracer (:mod:`.tracers`: names, specs, event
counts), the runner that starts one beside a workload on a target and never lets it
outlive its controller (:mod:`.lifecycle`), and the ELF reader that finds probe sites
(:mod:`.elf`)."""
