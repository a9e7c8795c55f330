import { conformanceSuites, MODES } from './test/openfga-conformance';

conformanceSuites(MODES.memory);
