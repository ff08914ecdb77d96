// The turn inspector as one ES module for anywidget (src/widget.ts -> arcana_jupyter/static/widget.js).
// Bundled with the webpack that @jupyterlab/builder already brings (no other bundler to install);
// run by scripts/build-labextension.sh after `tsc` wrote lib/. Nothing from JupyterLab is in it.
const path = require('path');

module.exports = {
  mode: 'production',
  target: ['web', 'es2020'],
  entry: path.resolve(__dirname, 'lib', 'widget.js'),
  experiments: { outputModule: true },
  output: {
    path: path.resolve(__dirname, '..', 'arcana_jupyter', 'static'),
    filename: 'widget.js',
    module: true,
    library: { type: 'module' },
    chunkFormat: 'module',
    clean: false
  },
  devtool: false,
  performance: { hints: false },
  optimization: { splitChunks: false, runtimeChunk: false }
};
