/*
 * CADETS scenario 2 (DTrace): fbt UFS-occ, syscall entry, vfs wroc
 * Probe descriptions: seed 000 section V, fbt UFS-occ: listing 39/40, syscall entry: listing 49/50, vfs wroc: listing 53/54;
 * slides 003 "Benchmark 2" corrections applied (DTrace vfs wroc: vfs::vop_*;
 * DTrace key: probeprov, probemod, probefunc, probename; 'fht' and 'xfs_*^*' typos). Action: count per probe, as the CADETS report.
 */
fbt::ufs_open:,
fbt::ufs_close:,
fbt::ufs_create:,
syscall:::entry,
vfs::vop_write:,
vfs::vop_read:,
vfs::vop_open:,
vfs::vop_close:
{
	@[probeprov, probemod, probefunc, probename] = count();
}
