/*
 * CADETS scenario 9 (DTrace): vfs all
 * Probe descriptions: seed 000 section V, vfs all: listing 51/52;
 * slides 003 "Benchmark 2" corrections applied (DTrace vfs wroc: vfs::vop_*;
 * DTrace key: probeprov, probemod, probefunc, probename; 'fht' and 'xfs_*^*' typos). Action: count per probe, as the CADETS report.
 */
vfs:::
{
	@[probeprov, probemod, probefunc, probename] = count();
}
