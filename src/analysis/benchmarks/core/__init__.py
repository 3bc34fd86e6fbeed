"""The machinery every benchmark shares, apart from the benchmarks themselves: the registry
and base class (:mod:`.base`), the plug-ins other packages declare (:mod:`.plugins`), the one
run path (:mod:`.run`) and its fleet form (:mod:`.fleet`), the one report door
(:mod:`.report`), what a target lacks (:mod:`.tools`) and the registry as tables
(:mod:`.listing`). It imports no benchmark: they are found by the registry (a structure test
says so)."""
