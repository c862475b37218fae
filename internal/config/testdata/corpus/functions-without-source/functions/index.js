exports.hello = () => {};
