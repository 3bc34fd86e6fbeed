/* tracelab-never.so: the bystander benchmark's probed file (built beside the rate meter).
 * tracelab_never() is never called by anyone: a uprobe on it is a tracer attached where no
 * process goes (idle). tracelab_loaded() runs once each time the file is loaded (a
 * constructor): the rate meter's -d loop loads and unloads it once per iteration, and a
 * counting script on tracelab_loaded() counts those loads. */
__attribute__((noinline, used)) int
tracelab_never(int i)
{
	__asm__ __volatile__("" ::: "memory");
	return (i + 1);
}

__attribute__((constructor, noinline, used)) void
tracelab_loaded(void)
{
	__asm__ __volatile__("" ::: "memory");
}
