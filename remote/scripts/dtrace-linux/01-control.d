/* Benchmark 1, experiment 01 (Control): tracer running, only its BEGIN probe.
 * Source: Piotrowski's slides (script 01)
 */
dtrace:::BEGIN {}
