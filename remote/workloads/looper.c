/* looper: Gregg's pid-provider stress test ("DTrace pid Provider Overhead", 2011).
 * func() is called CALLS times (the post: 100 million, as 1,000,000 x 100) with the
 * string "hello DTrace"; the only change is that CALLS is the first argument, because a
 * uprobe costs ~10 us in a VM and 100 million traced calls would take 17 minutes.
 * usage: looper [CALLS]   (default 100000000) */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int
func(char *input)
{
	return (strlen(input) + 1);
}

int
main(int argc, char **argv)
{
	long i, calls = argc > 1 ? atol(argv[1]) : 100000000L;
	volatile int sum = 0;

	if (calls < 0)
		return (2);
	for (i = 0; i < calls; i++)
		sum += func("hello DTrace");
	return (0);
}
