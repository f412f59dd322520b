/* A shared object that is not a dranet plugin: it exports no entry symbol. */
int dranet_fake_not_a_plugin(void) { return 42; }
