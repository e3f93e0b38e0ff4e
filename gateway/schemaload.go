package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/xeipuuv/gojsonreference"
	"github.com/xeipuuv/gojsonschema"
)

// memoryLoader is a gojsonschema loader over one JSON document in memory.
// Its factory refuses every other document, so the validator never reads a
// file or the network, whatever a schema refers to.
type memoryLoader []byte

func (l memoryLoader) JsonSource() any { return string(l) }

func (l memoryLoader) LoadJSON() (any, error) {
	dec := json.NewDecoder(bytes.NewReader(l))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func (l memoryLoader) JsonReference() (gojsonreference.JsonReference, error) {
	return gojsonreference.NewJsonReference("#")
}

func (l memoryLoader) LoaderFactory() gojsonschema.JSONLoaderFactory { return noLoading{} }

// noLoading is the loader factory of a document in memory: it loads
// nothing.
type noLoading struct{}

func (noLoading) New(source string) gojsonschema.JSONLoader { return refusedLoader(source) }

// refusedLoader is a document the validator asked for and is not given.
type refusedLoader string

func (l refusedLoader) JsonSource() any { return string(l) }

func (l refusedLoader) LoadJSON() (any, error) {
	return nil, fmt.Errorf("its input schema refers outside itself: %q", string(l))
}

func (l refusedLoader) JsonReference() (gojsonreference.JsonReference, error) {
	return gojsonreference.NewJsonReference(string(l))
}

func (l refusedLoader) LoaderFactory() gojsonschema.JSONLoaderFactory { return noLoading{} }

// metaSchemaURLs are the meta-schemas gojsonschema keeps a copy of; asked
// for by exactly these addresses, it returns its copy and fetches nothing.
var metaSchemaURLs = map[gojsonschema.Draft]string{
	gojsonschema.Draft4: "http://json-schema.org/draft-04/schema",
	gojsonschema.Draft6: "http://json-schema.org/draft-06/schema",
	gojsonschema.Draft7: "http://json-schema.org/draft-07/schema",
}

// metaSchemas compile each draft's meta-schema once, from the library's
// copy, with nothing loaded from anywhere else.
var metaSchemas = map[gojsonschema.Draft]func() (*gojsonschema.Schema, error){
	gojsonschema.Draft4: sync.OnceValues(func() (*gojsonschema.Schema, error) { return compileMetaSchema(gojsonschema.Draft4) }),
	gojsonschema.Draft6: sync.OnceValues(func() (*gojsonschema.Schema, error) { return compileMetaSchema(gojsonschema.Draft6) }),
	gojsonschema.Draft7: sync.OnceValues(func() (*gojsonschema.Schema, error) { return compileMetaSchema(gojsonschema.Draft7) }),
}

func compileMetaSchema(d gojsonschema.Draft) (*gojsonschema.Schema, error) {
	doc, err := gojsonschema.NewReferenceLoader(metaSchemaURLs[d]).LoadJSON()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	sl := gojsonschema.NewSchemaLoader()
	sl.Draft = d
	sl.AutoDetect = false
	return sl.Compile(memoryLoader(data))
}
