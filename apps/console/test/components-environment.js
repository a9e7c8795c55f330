// jsdom with the browser's fetch API as Node has it (jsdom has none), so the console's API client runs unchanged in
// component tests; relative URLs resolve against the page's address as a browser resolves them.
const { TestEnvironment } = require('jest-environment-jsdom');

class ConsoleEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    const page = this.global.location.href;
    const NodeRequest = globalThis.Request;
    class PageRequest extends NodeRequest {
      constructor(input, init) {
        super(typeof input === 'string' ? new URL(input, page) : input, init);
      }
    }
    // Node's FormData, which Node's Request takes as a body, filled from a page's form as the browser's would be
    // (Node's own constructor takes no form).
    const PageForms = this.global.FormData;
    class PageFormData extends globalThis.FormData {
      constructor(form, submitter) {
        super();
        if (form) for (const [name, value] of new PageForms(form, submitter)) this.append(name, value);
      }
    }
    Object.assign(this.global, {
      fetch: (input, init) => globalThis.fetch(typeof input === 'string' ? new URL(input, page) : input, init),
      Request: PageRequest,
      Response: globalThis.Response,
      Headers: globalThis.Headers,
      FormData: PageFormData,
      ReadableStream: globalThis.ReadableStream,
      TextEncoder: globalThis.TextEncoder,
      TextDecoder: globalThis.TextDecoder,
      structuredClone: globalThis.structuredClone,
    });
  }
}

module.exports = ConsoleEnvironment;
