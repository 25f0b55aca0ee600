// The bench and the tests read Prometheus text the same way.
export { metricValue as sampleValue } from '../../../loadtest/src/measure/drain.js';
