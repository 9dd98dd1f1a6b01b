// Package english keeps kubectl's printers in the English they are written
// in. kubectl's packages translate their strings through a catalogue that
// its get command loads while it initialises, at every start of regctl
// (13 ms and 4 MB of a start-up that is most of a short command). regctl
// speaks English only, and kubectl's English catalogue maps each string to
// itself, so regctl loads none.
//
// Only regctl's main package imports it. Go initialises packages in
// import-path order once their dependencies are done, and this one depends
// on nothing but kubectl's i18n package, so its initialiser runs before
// any package that translates.
package english

import "k8s.io/kubectl/pkg/util/i18n"

func init() {
	if err := i18n.SetLoadTranslationsFunc(func() error { return nil }); err != nil {
		panic(err)
	}
}
