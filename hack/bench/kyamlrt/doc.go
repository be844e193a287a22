// Command kyamlrt is a reference for hack/bench, not the floor: a kyaml
// whole-stream round trip that changes nothing.
//
//	kyamlrt [FILE]       kio.ByteReader -> kio.ByteWriter over a multi-document stream
//	kyamlrt -rl < RL     kio.ByteReadWriter (KeepReaderAnnotations) over a ResourceList,
//	                     as a kyaml fn/framework function reads and writes it
//	kyamlrt -noop        exits at once: the start-up cost of linking kyaml alone
//
// Both read the whole stream into memory, and kio.ByteWriter encodes every
// document with one shared yaml.v3 Encoder, which keeps its events until it is
// closed (go-yaml/yaml#873): time and memory grow much faster than the floor's
// (hack/bench/floor). The -rl form is what any kyaml-based KRM function pays,
// so inject-fn is compared to it.
package main
