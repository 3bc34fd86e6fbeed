/*
 * CADETS scenario 7 (DTrace): fbt UFS-a, syscall all
 * Probe descriptions: seed 000 section V, fbt UFS-a: listing 41/42, syscall all: listing 47/48;
 * slides 003 "Benchmark 2" corrections applied (DTrace vfs wroc: vfs::vop_*;
 * DTrace key: probeprov, probemod, probefunc, probename; 'fht' and 'xfs_*^*' typos). Action: count per probe, as the CADETS report.
 */
fbt::ufs_*:,
fbt::a*:,
syscall:::
{
	@[probeprov, probemod, probefunc, probename] = count();
}
