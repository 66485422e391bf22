/** The output workers' way of posting moved buffers; it lives with the other code both use-case layers share. */
export { postTransferring } from '../concurrency/post-transferring.js';
