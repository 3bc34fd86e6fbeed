/*
 * ktrace.d: flow-trace one system call of a `cat` through every kernel function (fbt).
 * Slides 003, "Smoking gun: ktrace.d":
 *   time dtrace -s ./ktrace.d -c 'cat /x' read   -> matched 51486 probes, 1.07 s
 * usage: dtrace -s ktrace.d SYSCALL (not quiet: flowindent prints the flow).
 * Changes: the runner starts cat itself, so the entry clause is predicated on
 * execname == "cat" (the slides' -c); and the return clause does not exit(0): the
 * runner stops DTrace with SIGINT, as every other tracer, and times that stop.
 */
#pragma D option flowindent

syscall::$1:entry
/execname == "cat"/
{
	self->flag = 1;
}

fbt:::
/self->flag/
{
}

syscall::$1:return
/self->flag/
{
	self->flag = 0;
}
