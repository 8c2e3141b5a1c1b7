// The failure converter of every Temporal worker and workflow bundle of the service, loaded by path
// (the workflow sandbox cannot take an object): a failure's message and stack trace travel in an
// encoded payload, which the payload codec encrypts (core/payload-codec.ts).
const { DefaultFailureConverter } = require('@temporalio/common');

exports.failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
