// Jest runs each test file in its own realm, which lacks the Symbol.dispose and Symbol.asyncDispose
// that Node 20 adds to its main realm; `await using` needs them.
const symbols = Symbol as unknown as { dispose?: symbol; asyncDispose?: symbol };
symbols.dispose ??= Symbol('Symbol.dispose');
symbols.asyncDispose ??= Symbol('Symbol.asyncDispose');

// An unhandled rejection fails the run instead of being printed and forgotten.
process.on('unhandledRejection', (reason) => {
  throw reason;
});
