/*
 * CADETS scenario 8 (DTrace): fbt UFS-abv, syscall all
 * Probe descriptions: seed 000 section V, fbt UFS-abv: listing 43/44, syscall all: listing 47/48;
 * slides 003 "Benchmark 2" corrections applied (DTrace vfs wroc: vfs::vop_*;
 * DTrace key: probeprov, probemod, probefunc, probename; 'fht' and 'xfs_*^*' typos). Action: count per probe, as the CADETS report.
 */
fbt::ufs_*:,
fbt::a*:,
fbt::b*:,
fbt::v*:,
syscall:::
{
	@[probeprov, probemod, probefunc, probename] = count();
}
