/*
 * CADETS scenario 1 (DTrace): fbt UFS, syscall all, vfs all
 * Probe descriptions: seed 000 section V, fbt UFS: listing 37/38, syscall all: listing 47/48, vfs all: listing 51/52;
 * slides 003 "Benchmark 2" corrections applied (DTrace vfs wroc: vfs::vop_*;
 * DTrace key: probeprov, probemod, probefunc, probename; 'fht' and 'xfs_*^*' typos). Action: count per probe, as the CADETS report.
 */
fbt::ufs_*:,
syscall:::,
vfs:::
{
	@[probeprov, probemod, probefunc, probename] = count();
}
