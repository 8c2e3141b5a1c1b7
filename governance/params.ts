// The stored form of query parameters lives with the store (store/params.ts); named here for the pipeline.
export { decodeParams, encodeParams, type StoredParam } from '../store/params.ts';
